import assert from "node:assert/strict";
import { test } from "node:test";
import { API_KEY_ENV, SECRET_KEY, findApiKey, serverEnvironment, type SecretStore } from "../src/secrets";

function store(initial: Record<string, string> = {}): SecretStore & { data: Record<string, string> } {
  const data = { ...initial };
  return {
    data,
    get: async (k) => data[k],
    store: async (k, v) => void (data[k] = v),
    delete: async (k) => void delete data[k],
  };
}

test("the environment wins over secret storage", async () => {
  const key = await findApiKey({ [API_KEY_ENV]: " env-key " }, store({ [SECRET_KEY]: "stored" }));
  assert.deepEqual(key, { value: "env-key", source: "environment" });
});

test("secret storage is used when the environment has no key", async () => {
  assert.deepEqual(await findApiKey({}, store({ [SECRET_KEY]: "stored" })), { value: "stored", source: "secret-storage" });
  assert.equal(await findApiKey({ [API_KEY_ENV]: "  " }, store()), undefined);
});

test("the key reaches the server env, a key in settings is dropped with a warning", () => {
  const { env, warnings } = serverEnvironment(
    { PATH: "/bin", UNSET: undefined },
    { [API_KEY_ENV]: "leaked", EXTRA: "1" },
    { value: "sk-real", source: "secret-storage" },
    "http://127.0.0.1:9999",
  );
  assert.equal(env[API_KEY_ENV], "sk-real");
  assert.equal(env.EXTRA, "1");
  assert.equal(env.PATH, "/bin");
  assert.equal(env.DEEPSEEK_BASE_URL, "http://127.0.0.1:9999");
  assert.ok(!("UNSET" in env));
  assert.equal(warnings.length, 1);
  assert.match(warnings[0], /Set API Key/);
  assert.ok(!warnings[0].includes("leaked"));
});

test("without a key nothing is invented", () => {
  const { env } = serverEnvironment({}, {}, undefined);
  assert.ok(!(API_KEY_ENV in env));
});
