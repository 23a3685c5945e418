// The agent as the browser reaches it: the Connect protocol (binary) through the Envoy edge, which
// bridges it to the unchanged gRPC server; the widget key rides along as a header on every call.
import { createClient, type Client } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import { AgentService } from "./gen/glossator/v1/agent_pb.js";

export type AgentClient = Client<typeof AgentService>;

/** The header the edge reads the public widget key from (the edge allows it in CORS). */
export const WIDGET_KEY_HEADER = "x-glossator-widget-key";

export function agentClient(endpoint: string, widgetKey: string): AgentClient {
  const transport = createConnectTransport({
    baseUrl: endpoint,
    // The edge's connect_grpc_bridge hands the bytes to grpcio unchanged: only protobuf will do.
    useBinaryFormat: true,
    interceptors: widgetKey
      ? [
          (next) => (request) => {
            request.header.set(WIDGET_KEY_HEADER, widgetKey);
            return next(request);
          },
        ]
      : [],
  });
  return createClient(AgentService, transport);
}
