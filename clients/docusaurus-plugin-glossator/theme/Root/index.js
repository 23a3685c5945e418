// Root wraps the whole site above the router, so the widget (and its conversation) stays mounted
// while the reader moves between pages. A site with a Root of its own renders <GlossatorWidget />
// in it instead (import GlossatorWidget from "@theme/GlossatorWidget").
import React from "react";
import GlossatorWidget from "@theme/GlossatorWidget";

export default function Root({ children }) {
  return React.createElement(React.Fragment, null, children, React.createElement(GlossatorWidget));
}
