// The widget for a Docusaurus site: mounted in the browser only (effects do not run during the
// static build), with the plugin's options; removed when the component unmounts.
import { useEffect } from "react";
import { usePluginData } from "@docusaurus/useGlobalData";
import { mount } from "glossator-widget";

export default function GlossatorWidget() {
  const options = usePluginData("docusaurus-plugin-glossator");
  useEffect(() => {
    const widget = mount(options);
    return () => widget.destroy();
  }, [options]);
  return null;
}
