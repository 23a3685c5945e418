// What a reader is told for each kind of failure (src/errors.ts), with errors as connect-web builds
// them from the edge's and the agent's replies: the retry delay from google.rpc.RetryInfo, from a
// retry-after header or a unary call's trailer, or from the message; a void answer; fetch failing.
import assert from "node:assert/strict";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const source = fileURLToPath(new URL("../src/", import.meta.url));
const bundle = await build({
  stdin: {
    contents: `export * from "./errors.ts";
      export { Code, ConnectError } from "@connectrpc/connect";
      export { BinaryWriter } from "@bufbuild/protobuf/wire";`,
    resolveDir: source,
    loader: "ts",
  },
  bundle: true,
  format: "esm",
  platform: "neutral",
  write: false,
});
const { describeError, answerIsVoid, Code, ConnectError, BinaryWriter } = await import(
  `data:text/javascript;base64,${Buffer.from(bundle.outputFiles[0].text).toString("base64")}`
);

/** google.rpc.RetryInfo{retry_delay: Duration{seconds, nanos}} as the wire carries it. */
function retryInfo(seconds, nanos = 0) {
  const delay = new BinaryWriter().uint32(8).int64(seconds).uint32(16).int32(nanos).finish();
  return { type: "google.rpc.RetryInfo", value: new BinaryWriter().uint32(10).bytes(delay).finish() };
}

function refusal(message, { headers = {}, details = [] } = {}) {
  const error = new ConnectError(message, Code.ResourceExhausted, headers);
  error.details = details;
  return error;
}

test("a refusal says when to try again, from RetryInfo first", () => {
  const error = refusal("over the limit", { details: [retryInfo(11, 500_000_000)], headers: { "retry-after": "3" } });
  assert.equal(describeError(error), "Too many questions right now: try again in 12 s.");
});

test("then from retry-after (the edge's header, a unary call's trailer) and the message", () => {
  assert.equal(describeError(refusal("x", { headers: { "retry-after": "7" } })), "Too many questions right now: try again in 7 s.");
  assert.equal(describeError(refusal("x", { headers: { "trailer-retry-after": "9" } })), "Too many questions right now: try again in 9 s.");
  assert.equal(
    describeError(refusal("more than 20 questions in one session a minute: try again in 4 s")),
    "Too many questions right now: try again in 4 s.",
  );
  assert.equal(describeError(refusal("request body too large")), "Too many questions right now: try again shortly.");
});

test("a refused key, a bad question, an unreachable service: one sentence each", () => {
  assert.match(describeError(new ConnectError("the widget key is not valid", Code.Unauthenticated)), /widget key was refused/);
  assert.match(describeError(new ConnectError("may not be used from origin 'x'", Code.PermissionDenied)), /widget key was refused/);
  assert.equal(
    describeError(new ConnectError("invalid request: query: must not be empty", Code.InvalidArgument)),
    "The question was not accepted: query: must not be empty",
  );
  // fetch() rejecting (offline, or CORS refused the origin) reaches connect-web as a TypeError.
  const unreachable = describeError(new TypeError("Failed to fetch"));
  assert.match(unreachable, /^Could not reach the answer service/);
  assert.doesNotMatch(unreachable, /TypeError|at /);
});

test("a void answer is recognized, with or without the ErrorInfo detail", () => {
  const said = new ConnectError("the answer was cut off and the partial answer streamed so far is void: x", Code.Unavailable);
  assert.equal(answerIsVoid(said), true);
  assert.match(describeError(said), /withdrawn/);
  assert.equal(answerIsVoid(new ConnectError("the agent cannot be reached", Code.Unavailable)), false);
  assert.equal(answerIsVoid(new ConnectError("void", Code.Internal)), false);
});
