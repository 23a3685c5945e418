// The widget as a module (the Docusaurus plugin's theme component imports it): mount() and its types.
export { mount, type Widget, type WidgetOptions } from "./widget.js";
