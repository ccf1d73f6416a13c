/**
 * The API key: from the environment (`DEEPSEEK_API_KEY`) or VS Code's
 * SecretStorage, handed to the server process through its environment.
 * It is never written to settings; a key found in `deepseek.server.env`
 * is dropped with a warning.
 */

export const API_KEY_ENV = "DEEPSEEK_API_KEY";
export const SECRET_KEY = "deepseek.apiKey";

/** The subset of `vscode.SecretStorage` we use. */
export interface SecretStore {
  get(key: string): PromiseLike<string | undefined>;
  store(key: string, value: string): PromiseLike<void>;
  delete(key: string): PromiseLike<void>;
}

export interface ApiKey { value: string; source: "environment" | "secret-storage" }

/** The environment wins (CI, shells); else what `DeepSeek: Set API Key` stored. */
export async function findApiKey(
  env: Record<string, string | undefined>,
  secrets: SecretStore,
): Promise<ApiKey | undefined> {
  const fromEnv = env[API_KEY_ENV]?.trim();
  if (fromEnv) return { value: fromEnv, source: "environment" };
  const stored = (await secrets.get(SECRET_KEY))?.trim();
  return stored ? { value: stored, source: "secret-storage" } : undefined;
}

export interface ServerEnv { env: Record<string, string>; warnings: string[] }

/** The server process environment: ours, plus `deepseek.server.env`, plus the key. */
export function serverEnvironment(
  processEnv: Record<string, string | undefined>,
  settingsEnv: Record<string, string>,
  apiKey: ApiKey | undefined,
  baseUrl = "",
): ServerEnv {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(processEnv)) if (v !== undefined) env[k] = v;
  const warnings: string[] = [];
  for (const [k, v] of Object.entries(settingsEnv)) {
    if (k === API_KEY_ENV) {
      warnings.push(
        `DeepSeek: ignored ${API_KEY_ENV} in the deepseek.server.env setting (settings are plain text). ` +
          "Remove it and run `DeepSeek: Set API Key` instead.",
      );
      continue;
    }
    env[k] = v;
  }
  if (baseUrl) env.DEEPSEEK_BASE_URL = baseUrl;
  if (apiKey) env[API_KEY_ENV] = apiKey.value;
  return { env, warnings };
}
