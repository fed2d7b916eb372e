// The run page's event stream, held by a worker instead of the page: a
// stream the page itself held open would keep a tool that waits for the
// page's requests to end (a headless browser's --virtual-time-budget, as
// screenshots are taken) waiting for ever. It passes each event on as
// {type, data}, and the stream's state as {type: "open"} and
// {type: "error"}; {type: "unsupported"} where a worker has no
// EventSource, for the page to hold the stream itself.
"use strict";

if (typeof EventSource === "undefined") {
  postMessage({ type: "unsupported" });
} else {
  const es = new EventSource("api/run/events");
  for (const type of ["run", "status"]) {
    es.addEventListener(type, (ev) => postMessage({ type, data: ev.data }));
  }
  es.onopen = () => postMessage({ type: "open" });
  // EventSource reconnects by itself.
  es.onerror = () => postMessage({ type: "error" });
}
