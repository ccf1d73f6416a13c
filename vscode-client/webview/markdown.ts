/**
 * Model answers as HTML: markdown-it with raw HTML off (a `<script>` or an
 * `<img onerror>` in an answer is shown as text), images off (no request leaves
 * for a model-chosen URL), links only to http(s)/mailto, and fenced code
 * highlighted by highlight.js into class names that panel.css colours with the
 * theme's variables. Pure (no DOM): unit-tested in node.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import cpp from "highlight.js/lib/languages/cpp";
import diff from "highlight.js/lib/languages/diff";
import go from "highlight.js/lib/languages/go";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import lua from "highlight.js/lib/languages/lua";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import MarkdownIt from "markdown-it";

const LANGUAGES = { bash, cpp, diff, go, java, javascript, json, lua, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

const SAFE_LINK = /^(https?:|mailto:|#)/i;

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);
}

function highlight(code: string, lang: string): string {
  const name = lang.trim().toLowerCase().split(/\s+/)[0];
  try {
    if (name && hljs.getLanguage(name)) return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    // a grammar that fails on odd input: shown plain below
  }
  return escapeHtml(code);
}

const md = new MarkdownIt({ html: false, linkify: false, breaks: false, highlight });
md.disable("image");
md.validateLink = (url: string) => SAFE_LINK.test(url.trim());

/** HTML for a model answer (or a prompt): safe to put into the panel's DOM. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** The language names fenced code may use and get colours. */
export function highlightedLanguages(): string[] {
  return hljs.listLanguages();
}
