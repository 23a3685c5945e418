// What a reader is told when a call fails: one short sentence per case, never a stack trace.
import { Code, ConnectError } from "@connectrpc/connect";
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

const RETRY_INFO = "google.rpc.RetryInfo";
const ERROR_INFO = "google.rpc.ErrorInfo";

/** Field `number` of a serialized message, as bytes (the first occurrence), or undefined. */
function field(bytes: Uint8Array, number: number): Uint8Array | undefined {
  const reader = new BinaryReader(bytes);
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === number && wireType === WireType.LengthDelimited) return reader.bytes();
    reader.skip(wireType, fieldNo);
  }
  return undefined;
}

/** google.rpc.RetryInfo.retry_delay (a Duration), in whole seconds rounded up. */
function retryInfoSeconds(bytes: Uint8Array): number | undefined {
  const delay = field(bytes, 1);
  if (delay === undefined) return undefined;
  const reader = new BinaryReader(delay);
  let seconds = 0;
  let nanos = 0;
  while (reader.pos < reader.len) {
    const [fieldNo, wireType] = reader.tag();
    if (fieldNo === 1) seconds = Number(reader.int64());
    else if (fieldNo === 2) nanos = reader.int32();
    else reader.skip(wireType, fieldNo);
  }
  return Math.ceil(seconds + nanos / 1e9);
}

/** google.rpc.ErrorInfo.reason. */
function errorInfoReason(bytes: Uint8Array): string {
  const reason = field(bytes, 1);
  return reason === undefined ? "" : new TextDecoder().decode(reason);
}

/** The wait a refusal asks for. The edge's Connect bridge drops status details, so RetryInfo
 * (which gRPC-Web keeps) is only the first place looked; then retry-after, a header from the edge's
 * rate limit or a trailer from the agent's (a unary call's trailers arrive as trailer-*); then the
 * message, which ends "try again in N s". */
export function retryAfterSeconds(error: ConnectError): number | undefined {
  for (const detail of error.details) {
    if ("type" in detail && detail.type === RETRY_INFO) {
      const seconds = retryInfoSeconds(detail.value);
      if (seconds !== undefined) return Math.max(1, seconds);
    }
  }
  const said =
    error.metadata.get("retry-after") ??
    error.metadata.get("trailer-retry-after") ??
    /try again in (\d+(?:\.\d+)?) ?s\b/i.exec(error.rawMessage)?.[1];
  const seconds = Math.ceil(Number.parseFloat(said ?? ""));
  return Number.isFinite(seconds) && seconds >= 0 ? Math.max(1, seconds) : undefined;
}

/** Whether the agent declared what it streamed void (ErrorInfo ANSWER_VOID; over the Connect
 * bridge, which drops details, its message says so): the partial answer must not stay shown. */
export function answerIsVoid(reason: unknown): boolean {
  const error = ConnectError.from(reason);
  if (error.code !== Code.Unavailable) return false;
  for (const detail of error.details) {
    if ("type" in detail && detail.type === ERROR_INFO) return errorInfoReason(detail.value) === "ANSWER_VOID";
  }
  return /\bvoid\b/.test(error.rawMessage);
}

/** The sentence shown for a failed call. */
export function describeError(reason: unknown): string {
  const error = ConnectError.from(reason);
  switch (error.code) {
    case Code.ResourceExhausted: {
      const seconds = retryAfterSeconds(error);
      return seconds === undefined
        ? "Too many questions right now: try again shortly."
        : `Too many questions right now: try again in ${seconds} s.`;
    }
    case Code.Unauthenticated:
    case Code.PermissionDenied:
      return "This site's widget key was refused: the site's owner must check its configuration.";
    case Code.InvalidArgument:
      // The service's own sentence ("invalid request: query: must not be empty"): short and plain.
      return `The question was not accepted: ${error.rawMessage.replace(/^invalid request:\s*/, "")}`;
    case Code.DeadlineExceeded:
      return "The answer took too long. Please try again.";
    case Code.Canceled:
      return "Stopped.";
    case Code.Unavailable:
      if (answerIsVoid(error)) return "The answer could not be checked and was withdrawn. Please try again.";
      return "The answer service is unavailable right now. Please try again in a moment.";
    case Code.Unknown:
    case Code.Internal:
      // fetch() itself failed: offline, the service down, or CORS refused this site's origin (a
      // browser does not say which).
      if (error.cause instanceof TypeError || /fetch|network/i.test(error.rawMessage)) {
        return "Could not reach the answer service: you may be offline, or this site is not allowed to use it.";
      }
      return "Something went wrong on the answer service. Please try again.";
    default:
      return `The question could not be answered (${Code[error.code]}).`;
  }
}
