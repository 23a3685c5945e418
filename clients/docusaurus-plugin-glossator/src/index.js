// @ts-check
// The Docusaurus plugin: its options become global data, and its theme adds the widget to every page
// (theme/Root renders theme/GlossatorWidget next to the site; both can be swizzled).
//
//   plugins: [["docusaurus-plugin-glossator", { endpoint: "https://ask.example.com", collection: "my-book", widgetKey: "wk_..." }]]
const path = require("node:path");

const NAME = "docusaurus-plugin-glossator";
const DEFAULT_ID = "default"; // Docusaurus's DEFAULT_PLUGIN_ID

/**
 * @typedef {{ id: string, endpoint: string, collection?: string, widgetKey?: string, title?: string }} Options
 * @param {unknown} _context the site's LoadContext (unused: the widget needs nothing from the build)
 * @param {Options} options
 */
function pluginGlossator(_context, options) {
  return {
    name: NAME,
    getThemePath() {
      return path.join(__dirname, "..", "theme");
    },
    /** @param {{ actions: { setGlobalData: (data: unknown) => void } }} args */
    async contentLoaded({ actions }) {
      const { endpoint, collection = "", widgetKey = "", title } = options;
      actions.setGlobalData({ endpoint, collection, widgetKey, ...(title ? { title } : {}) });
    },
  };
}

/**
 * Docusaurus calls this with the options from docusaurus.config.js before the build starts: a
 * missing or malformed endpoint stops the build with a sentence instead of a widget that cannot ask.
 * @param {{ options: Record<string, unknown> }} args
 * @returns {Options}
 */
pluginGlossator.validateOptions = ({ options }) => {
  const { endpoint, collection = "", widgetKey = "", title, id } = options;
  if (typeof endpoint !== "string" || !/^https?:\/\/[^/\s]+/.test(endpoint)) {
    throw new Error(`${NAME}: "endpoint" must be the edge's URL, such as https://ask.example.com (got ${JSON.stringify(endpoint)})`);
  }
  for (const [name, value] of Object.entries({ collection, widgetKey, title: title ?? "" })) {
    if (typeof value !== "string") throw new Error(`${NAME}: "${name}" must be a string`);
  }
  // Docusaurus keys a plugin's data by its id; a plugin that validates its own options returns it.
  return { id: typeof id === "string" ? id : DEFAULT_ID, endpoint, collection, widgetKey, ...(title ? { title } : {}) };
};

module.exports = pluginGlossator;
