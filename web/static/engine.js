// The engine of an exported page, which plays with no server: flipzero's
// own engine compiled to WebAssembly (flipzero.wasm, run by Go's
// wasm_exec.js) answers the page's requests, and ONNX Runtime Web (ort/,
// its WebAssembly SIMD build on one thread, which a static host's pages
// can run without special headers) evaluates the network (the model
// page.json names) for its search.

// start loads the network and the engine for page (page.json read) and
// returns the page's transport: request(method, path, body) → {status,
// data}, as the server answers. say(text) tells the person how loading
// goes.
export async function start(page, say) {
  say("Loading the network…");
  const ort = await import("./ort/ort.wasm.min.mjs");
  ort.env.wasm.numThreads = 1;
  ort.env.wasm.wasmPaths = new URL("ort/", document.baseURI).href;
  const model = await fetchBytes(page.model, "the network");
  let session;
  try {
    session = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
  } catch (err) {
    throw new Error("the network " + page.model + " does not load: " + message(err));
  }
  for (const name of ["policy", "wdl"]) {
    if (!session.outputNames.includes(name)) throw new Error("the network " + page.model + " has no output " + name);
  }
  const evaluate = (input, count) => evaluateWith(ort, session, page, input, count);
  say("Starting the engine…");
  const request = await startEngine(page, evaluate);
  return {
    engine: "page",
    evaluate,
    async request(method, path, body) {
      const answer = await request(method, path, body === undefined ? "" : JSON.stringify(body));
      return { status: answer.status, data: JSON.parse(answer.body) };
    },
  };
}

async function evaluateWith(ort, session, page, input, count) {
  const out = await session.run({ input: new ort.Tensor("float32", input, [count, ...page.input]) });
  return { policy: out.policy.data, wdl: out.wdl.data };
}

async function fetchBytes(url, what) {
  let res;
  try {
    res = await fetch(url);
  } catch (err) {
    throw new Error(what + " (" + url + ") could not be fetched: " + message(err));
  }
  if (!res.ok) throw new Error(what + " (" + url + ") could not be fetched: " + res.status + " " + res.statusText);
  return new Uint8Array(await res.arrayBuffer());
}

// startEngine runs flipzero.wasm and returns its request function once
// it has read the page and started its game.
async function startEngine(page, evaluate) {
  await loadScript("wasm_exec.js");
  const go = new Go();
  const bytes = await fetchBytes("flipzero.wasm", "the engine");
  const { instance } = await WebAssembly.instantiate(bytes, go.importObject);
  return new Promise((resolve, reject) => {
    globalThis.flipzeroBoot = {
      page: JSON.stringify(page),
      evaluate,
      ready: resolve,
      failed: (msg) => reject(new Error("the engine did not start: " + msg)),
    };
    go.run(instance).then(() => reject(new Error("the engine stopped")));
  });
}

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = src;
    s.onload = resolve;
    s.onerror = () => reject(new Error(src + " could not be loaded"));
    document.head.appendChild(s);
  });
}

function message(err) {
  return err && err.message ? err.message : String(err);
}
