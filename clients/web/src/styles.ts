// The widget's look, inside its shadow root: the page's CSS does not reach it, and it does not
// reach the page. Sizes in rem follow the reader's font size; a phone gets the whole screen.
export const STYLES = `
:host { all: initial; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: #1c1e21; }
[hidden] { display: none !important; }
button, textarea { font: inherit; color: inherit; }
button { cursor: pointer; border: 1px solid #c4c8ce; background: #fff; border-radius: 6px; padding: .35rem .7rem; min-height: 2.25rem; }
button:focus-visible, textarea:focus-visible, a:focus-visible { outline: 3px solid #3578e5; outline-offset: 2px; }
.g-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
.g-launcher { position: fixed; right: 1.25rem; bottom: 1.25rem; z-index: 2147483000; background: #3578e5; color: #fff; border: 0; border-radius: 999px; padding: .7rem 1.2rem; box-shadow: 0 2px 10px rgba(0,0,0,.25); }
:host(.g-open) .g-launcher { display: none; }
.g-panel { position: fixed; right: 1.25rem; bottom: 1.25rem; z-index: 2147483001; width: min(26rem, calc(100vw - 2.5rem)); height: min(40rem, calc(100vh - 2.5rem)); display: flex; flex-direction: column; background: #fff; border: 1px solid #d0d4da; border-radius: 12px; box-shadow: 0 8px 30px rgba(0,0,0,.22); overflow: hidden; }
header { display: flex; align-items: center; gap: .5rem; padding: .6rem .8rem; border-bottom: 1px solid #e3e6ea; }
h2 { flex: 1; margin: 0; font-size: 1rem; }
.g-close { border: 0; font-size: 1.4rem; line-height: 1; min-width: 2.25rem; }
.g-restart { font-size: .85rem; }
.g-log { flex: 1; overflow-y: auto; padding: .8rem; display: flex; flex-direction: column; gap: 1rem; }
.g-turn { display: flex; flex-direction: column; gap: .4rem; }
.g-question { align-self: flex-end; max-width: 90%; background: #eef3fd; border-radius: 10px; padding: .45rem .7rem; }
.g-question p { margin: 0; }
blockquote { margin: 0 0 .3rem; padding-left: .6rem; border-left: 3px solid #9db7ea; color: #4a4f57; font-size: .9em; max-height: 6em; overflow: hidden; }
.g-answer { white-space: pre-wrap; overflow-wrap: anywhere; border-left: 4px solid #c4c8ce; padding: .2rem .7rem; }
.g-answer[aria-busy="true"]:empty::after { content: "Searching the docs…"; color: #6a717b; }
.g-answer code { font-family: ui-monospace, monospace; background: #f3f4f6; padding: 0 .2em; border-radius: 3px; }
.g-cite { font-size: .8em; vertical-align: super; text-decoration: none; color: #1f5fc7; padding: 0 .1em; }
.g-state { margin: 0; font-size: .85rem; font-weight: 600; }
.g-grounded .g-answer { border-left-color: #2e9e5b; }
.g-grounded .g-state { color: #1d7a44; }
.g-grounded .g-state::before { content: "✓ "; }
.g-ungrounded .g-answer, .g-replaced .g-answer { border-left-color: #d99a1e; }
.g-ungrounded .g-state, .g-replaced .g-state { color: #8a5a00; }
.g-ungrounded .g-state::before, .g-replaced .g-state::before { content: "! "; }
.g-not-covered .g-answer { border-left: 4px dashed #8a9099; color: #4a4f57; font-style: italic; background: #f6f7f8; }
.g-not-covered .g-state { color: #4a4f57; }
.g-not-covered .g-state::before { content: "∅ "; }
.g-unchecked .g-state { color: #6a717b; font-weight: 400; }
.g-sources { margin: 0; padding-left: 1.6rem; font-size: .88rem; }
.g-sources a { color: #1f5fc7; }
.g-error { margin: 0; color: #b3261e; font-weight: 600; }
.g-failed .g-answer:empty { display: none; }
.g-feedback { display: flex; flex-wrap: wrap; align-items: center; gap: .4rem; font-size: .88rem; }
.g-thumb { min-width: 2.75rem; display: inline-flex; align-items: center; justify-content: center; }
.g-thumb svg { width: 1.1rem; height: 1.1rem; fill: #4a4f57; }
.g-thumb-down svg { transform: rotate(180deg); }
.g-thumb[aria-pressed="true"] svg { fill: #1f5fc7; }
.g-thumb[aria-pressed="true"] { background: #eef3fd; border-color: #3578e5; }
.g-feedback-details { display: flex; flex-basis: 100%; gap: .4rem; }
.g-comment { flex: 1; }
textarea { border: 1px solid #c4c8ce; border-radius: 6px; padding: .4rem .5rem; resize: vertical; font-size: 16px; }
.g-form { display: flex; flex-wrap: wrap; gap: .5rem; padding: .6rem .8rem; border-top: 1px solid #e3e6ea; }
.g-form textarea { flex: 1; min-width: 0; }
.g-ask { background: #3578e5; color: #fff; border: 0; }
.g-selected { flex-basis: 100%; display: flex; gap: .4rem; align-items: flex-start; font-size: .85rem; color: #4a4f57; }
.g-selected blockquote { flex: 1; }
.g-drop { border: 0; min-height: 0; padding: 0 .3rem; }
.g-ask-selection { position: fixed; z-index: 2147483002; background: #1c1e21; color: #fff; border: 0; box-shadow: 0 2px 8px rgba(0,0,0,.3); }
@media (max-width: 600px) {
  .g-panel { inset: 0; width: 100vw; height: 100%; border-radius: 0; border: 0; }
  .g-launcher { right: 1rem; bottom: 1rem; }
}
@media (prefers-reduced-motion: no-preference) { .g-log { scroll-behavior: smooth; } }
`;
