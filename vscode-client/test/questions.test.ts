import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import { Experimental, type Question, type ServerApi } from "../src/protocol";
import { answerQuestion, declareQuestions, QUESTION_TITLE, type QuestionUI } from "../src/questions";

const free: Question = { session_id: "s1", question_id: "q1", question: "Which greeting style?", choices: null };

function fakeServer(fail?: Error) {
  const calls: [string, object][] = [];
  const api: ServerApi = {
    request: async <T>() => ({}) as T,
    command: async <T>(name: string, arg: object) => {
      calls.push([name, arg]);
      if (fail) throw fail;
      return { answered: true } as T;
    },
  };
  return { api, calls };
}

function fakeUI(reply: string | undefined) {
  const asked: [string, string, string][] = [];
  const errors: string[] = [];
  const ui: QuestionUI = {
    input: async (prompt, title) => (asked.push(["input", prompt, title]), reply),
    pick: async (choices, placeholder) => (asked.push(["pick", choices.join("|"), placeholder]), reply),
    error: (m) => void errors.push(m),
  };
  return { ui, asked, errors };
}

test("a free-text question opens an input box whose prompt is the question", async () => {
  const { api, calls } = fakeServer();
  const { ui, asked } = fakeUI("formal");
  assert.equal(await answerQuestion(api, ui, free), "formal");
  assert.deepEqual(asked, [["input", "Which greeting style?", QUESTION_TITLE]]);
  assert.deepEqual(calls, [["deepseek.answer", { question_id: "q1", answer: "formal" }]]);
});

test("Escape sends null, which cancels the question", async () => {
  const { api, calls } = fakeServer();
  assert.equal(await answerQuestion(api, fakeUI(undefined).ui, free), null);
  assert.deepEqual(calls, [["deepseek.answer", { question_id: "q1", answer: null }]]);
});

test("an empty answer is sent as given (the server decides what empty means)", async () => {
  const { api, calls } = fakeServer();
  await answerQuestion(api, fakeUI("").ui, free);
  assert.deepEqual(calls, [["deepseek.answer", { question_id: "q1", answer: "" }]]);
});

test("a question with choices is a quick pick", async () => {
  const { api, calls } = fakeServer();
  const { ui, asked } = fakeUI("b");
  await answerQuestion(api, ui, { ...free, choices: ["a", "b"] });
  assert.deepEqual(asked, [["pick", "a|b", "Which greeting style?"]]);
  assert.deepEqual(calls, [["deepseek.answer", { question_id: "q1", answer: "b" }]]);
});

test("a failed answer (question already cancelled) is reported, not thrown", async () => {
  const { api } = fakeServer(new Error("No pending question 'q1'"));
  const { ui, errors } = fakeUI("formal");
  await answerQuestion(api, ui, free);
  assert.equal(errors.length, 1);
  assert.match(errors[0], /not delivered: No pending question/);
});

test("the client capabilities declare that questions are answered here", () => {
  const caps: { experimental?: unknown } = {};
  declareQuestions(caps);
  assert.deepEqual(caps.experimental, { deepseekQuestions: true });
  const other: { experimental?: unknown } = { experimental: { somethingElse: 1 } };
  declareQuestions(other);
  assert.deepEqual(other.experimental, { somethingElse: 1, deepseekQuestions: true });
});

test("experimental capability keys match deepseek_ls/lsp/names.py", () => {
  // Compiled to out/unit/test/, so the repository root is four levels up.
  const text = fs.readFileSync(path.resolve(__dirname, "../../../../deepseek_ls/lsp/names.py"), "utf8");
  const python = [...text.matchAll(/^EXPERIMENTAL_[A-Z_]+ = "([^"]+)"/gm)].map((m) => m[1]).sort();
  assert.deepEqual(Object.values(Experimental).sort(), python);
});
