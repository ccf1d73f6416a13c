/**
 * Clarifying questions of the agent (`deepseek/question`): ask the person in an
 * input box (or a quick pick when the question has choices) and answer with
 * `deepseek.answer`. Escape answers `null`, which cancels the question.
 */
import { Commands, Experimental, type Question, type ServerApi } from "./protocol";

export interface QuestionUI {
  /** A free-text answer; undefined when dismissed. */
  input(prompt: string, title: string): Promise<string | undefined>;
  /** One of `choices`; undefined when dismissed. */
  pick(choices: string[], placeholder: string): Promise<string | undefined>;
  error(message: string): void;
}

export const QUESTION_TITLE = "DeepSeek asks";

/** Declare in the client capabilities that `deepseek/question` is handled here. */
export function declareQuestions(capabilities: { experimental?: unknown }): void {
  const current = capabilities.experimental;
  const base = current && typeof current === "object" ? (current as Record<string, unknown>) : {};
  capabilities.experimental = { ...base, [Experimental.questions]: true };
}

/** Ask the person and send the answer; returns what was sent (null = cancelled). */
export async function answerQuestion(api: ServerApi, ui: QuestionUI, q: Question): Promise<string | null> {
  const given = q.choices?.length ? await ui.pick(q.choices, q.question) : await ui.input(q.question, QUESTION_TITLE);
  const answer = given === undefined ? null : given;
  try {
    await api.command(Commands.answer, { question_id: q.question_id, answer });
  } catch (error) {
    // E.g. the session was cancelled while the box was open: the question is gone.
    ui.error(`DeepSeek: the answer was not delivered: ${error instanceof Error ? error.message : String(error)}`);
  }
  return answer;
}
