/**
 * Streamed answers and plans (`deepseek/stream`) in the "DeepSeek Stream" output
 * channel: the raw record (the agent panel shows the conversation). A stream
 * never opens the channel; an answer asked for from the palette (Ask, a custom
 * command) opens it when the panel is not on screen, and the command "DeepSeek:
 * Show Stream Output" opens it any time. `StreamFormatter` is pure: it turns
 * notifications into text, with a header when the session changes and a marker
 * when the model switches between its reasoning and its answer.
 */
import type { StreamParams } from "./protocol";

export class StreamFormatter {
  private session: string | undefined;
  private channel: string | undefined;
  private atLineStart = true;

  /** The text to append for one notification. */
  format(p: StreamParams): string {
    let out = "";
    const newline = () => (this.atLineStart ? "" : "\n");
    if (p.session_id !== this.session) {
      out += `${this.session === undefined ? "" : newline() + "\n"}── session ${p.session_id} ──\n`;
      this.session = p.session_id;
      this.channel = undefined;
      this.atLineStart = true;
    }
    if (p.channel === "status") {
      out += `${newline()}[${p.text.trim()}]\n`;
      this.atLineStart = true;
      this.channel = undefined;
      return out;
    }
    if (p.channel !== this.channel) {
      out += `${out.endsWith("\n") || this.atLineStart ? "" : "\n"}${p.channel === "reasoning" ? "[reasoning]" : "[answer]"}\n`;
      this.channel = p.channel;
      this.atLineStart = true;
    }
    out += p.text;
    if (p.text.length) this.atLineStart = p.text.endsWith("\n");
    return out;
  }

  /** Close the current block (e.g. when a command's result arrives). */
  end(): string {
    const out = this.atLineStart ? "" : "\n";
    this.atLineStart = true;
    this.channel = undefined;
    return out;
  }
}

/** The parts of `vscode.OutputChannel` we use. */
export interface ChannelLike {
  append(text: string): void;
  show(preserveFocus?: boolean): void;
}

export class StreamPanel {
  private readonly formatter = new StreamFormatter();
  private readonly answered = new Set<string>();
  private shown = false;

  /**
   * `elsewhere` says whether the stream is already on screen (the agent panel
   * is open): then `reveal` leaves the channel closed.
   */
  constructor(
    private readonly channel: ChannelLike,
    private readonly elsewhere: () => boolean = () => false,
  ) {}

  /** Append a notification; never opens the channel (a plan or a step streams on every run). */
  onStream(p: StreamParams): void {
    if (p.channel === "content" && p.text) this.answered.add(p.session_id);
    this.channel.append(this.formatter.format(p));
  }

  /**
   * Show a command's final answer unless it already streamed (a server or
   * model configured without streaming sends it only in the result).
   */
  finish(sessionId: string, content: string | undefined): void {
    if (!this.answered.has(sessionId) && content) {
      this.onStream({ session_id: sessionId, channel: "content", text: content });
    }
    this.channel.append(this.formatter.end());
  }

  /** Append a line of our own (results, explanations), closing any open block. */
  line(text: string): void {
    this.channel.append(this.formatter.end() + text + "\n");
  }

  show(): void {
    this.channel.show(true);
    this.shown = true;
  }

  /** Open the channel once for an answer the person asked for, unless the panel shows it. */
  reveal(): void {
    if (!this.shown && !this.elsewhere()) this.show();
  }
}
