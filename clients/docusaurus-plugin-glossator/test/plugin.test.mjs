// The plugin as Docusaurus calls it: options validated, turned into global data, and a theme
// folder holding the components the site resolves as @theme/Root and @theme/GlossatorWidget.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { test } from "node:test";

const plugin = createRequire(import.meta.url)("../src/index.js");
const options = { endpoint: "https://ask.example.com", collection: "my-book", widgetKey: "wk_public" };

test("the options become the global data the widget component reads", async () => {
  const instance = plugin({}, plugin.validateOptions({ options }));
  assert.equal(instance.name, "docusaurus-plugin-glossator");
  const data = [];
  await instance.contentLoaded({ content: undefined, actions: { setGlobalData: (value) => data.push(value) } });
  assert.deepEqual(data, [options]); // the id stays out of what the page receives
});

test("the theme provides Root and GlossatorWidget, and the widget comes from the glossator-widget package", () => {
  const theme = plugin({}, options).getThemePath();
  for (const component of ["Root", "GlossatorWidget"]) assert.ok(existsSync(join(theme, component, "index.js")), component);
  assert.match(readFileSync(join(theme, "Root", "index.js"), "utf8"), /@theme\/GlossatorWidget/);
  assert.match(readFileSync(join(theme, "GlossatorWidget", "index.js"), "utf8"), /from "glossator-widget"/);
});

test("a missing or malformed endpoint stops the build with a sentence", () => {
  assert.throws(() => plugin.validateOptions({ options: {} }), /"endpoint" must be the edge's URL/);
  assert.throws(() => plugin.validateOptions({ options: { endpoint: "ask.example.com" } }), /"endpoint"/);
  assert.throws(() => plugin.validateOptions({ options: { ...options, collection: 3 } }), /"collection" must be a string/);
  // The id Docusaurus keys the plugin's data by is kept (default "default"), as its own validation does.
  assert.equal(plugin.validateOptions({ options: { ...options, id: "second" } }).id, "second");
  assert.deepEqual(plugin.validateOptions({ options: { endpoint: "http://127.0.0.1:8080" } }), {
    id: "default",
    endpoint: "http://127.0.0.1:8080",
    collection: "",
    widgetKey: "",
  });
});
