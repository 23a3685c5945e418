// Asks the agent one question over AskStream and prints its typed events: the TypeScript twin of
// examples/python_client.py, type-checked by tests/unit/test_client_package.py.
//
//   npm ci && (cd ../.. && buf generate)   # src/gen/ from buf.gen.yaml (Go plugins or not: README)
//   npm run build && node dist/ask.js 127.0.0.1:50051 "How does Glossator check an answer?"
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AgentService } from "./gen/glossator/v1/agent_pb.js";

async function main(target: string, query: string): Promise<number> {
  const agent = createClient(AgentService, createGrpcTransport({ baseUrl: `http://${target}` }));
  const sources: string[] = [];
  try {
    for await (const message of agent.askStream({ query }, { timeoutMs: 120_000 })) {
      const event = message.event;
      switch (event.case) {
        case "started":
          console.log(`# session ${event.value.sessionId}, model ${event.value.model}`);
          break;
        case "answerDelta":
          process.stdout.write(event.value.text);
          break;
        case "citation":
          sources.push(`[${event.value.index}] ${event.value.source?.title} ${event.value.source?.sourceUrl}`);
          break;
        case "completed":
          console.log(`\n\nSources:\n${sources.join("\n")}`);
          console.log(`# grounded: ${event.value.response?.grounding?.isGrounded}`);
          break;
        default:
          break; // toolCall, toolError, retrieval, validation: see examples/python_client.py
      }
    }
    return 0;
  } catch (error) {
    const failure = ConnectError.from(error);
    console.error(`error: ${Code[failure.code]}: ${failure.rawMessage}`);
    return 1;
  }
}

const [target = "127.0.0.1:50051", ...words] = process.argv.slice(2);
process.exitCode = await main(target, words.join(" ") || "What is Glossator?");
