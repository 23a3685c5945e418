// The <script> embed: reads the tag's data attributes and mounts the widget when the page is ready.
//   <script src="glossator-widget.js" data-endpoint="https://ask.example.com"
//           data-collection="my-book" data-widget-key="wk_..." defer></script>
import { mount } from "./widget.js";

const script = document.currentScript as HTMLScriptElement | null;
const settings = script?.dataset ?? {};

function start(): void {
  if (!settings.endpoint) {
    console.error("glossator widget: the script tag needs a data-endpoint attribute");
    return;
  }
  const widget = mount({
    endpoint: settings.endpoint,
    collection: settings.collection,
    widgetKey: settings.widgetKey,
    title: settings.title,
  });
  (window as unknown as { glossator?: unknown }).glossator = widget;
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start, { once: true });
else start();
