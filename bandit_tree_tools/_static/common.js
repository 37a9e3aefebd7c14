// Helpers shared by every panel. The Python side prepends this file to each
// panel's module, so the panels stay single files with no build step and no
// network access.

// A binary column sent by Python (DataView, typed array or ArrayBuffer) as a
// typed array. The bytes are copied: message buffers may start at offsets
// that are not aligned for Float64Array.
export function bttColumn(buffer, Type) {
  if (buffer === null || buffer === undefined) return null;
  let bytes;
  if (buffer instanceof ArrayBuffer) bytes = new Uint8Array(buffer);
  else if (ArrayBuffer.isView(buffer)) bytes = new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  else return null;
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Type(copy.buffer);
}

// Colours for classes: distinguishable and readable on white.
const BTT_PALETTE = [
  "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
  "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
];

export function bttClassColour(index) {
  return BTT_PALETTE[((index % BTT_PALETTE.length) + BTT_PALETTE.length) % BTT_PALETTE.length];
}

function bttHexToRgb(hex) {
  const value = parseInt(hex.slice(1), 16);
  return [(value >> 16) & 255, (value >> 8) & 255, value & 255];
}

// Blend a colour with white: strength 0 is white, 1 the colour itself.
// The *RGB variants return 0xRRGGBB integers (cheap to store per node).
export function bttTintRGB(hex, strength) {
  const [r, g, b] = bttHexToRgb(hex);
  const s = Math.max(0, Math.min(1, strength));
  const mix = (c) => Math.round(255 - (255 - c) * s);
  return (mix(r) << 16) | (mix(g) << 8) | mix(b);
}

const bttColourStrings = new Map();
export function bttRGBString(packed) {
  let text = bttColourStrings.get(packed);
  if (text === undefined) {
    text = `rgb(${(packed >> 16) & 255},${(packed >> 8) & 255},${packed & 255})`;
    bttColourStrings.set(packed, text);
  }
  return text;
}

export function bttTint(hex, strength) {
  return bttRGBString(bttTintRGB(hex, strength));
}

const BTT_NO_COLOUR = 0xe8e8e8;

// Diverging scale for signed values: blue below zero, red above.
export function bttDivergingRGB(value, limit) {
  if (!Number.isFinite(value) || !(limit > 0)) return BTT_NO_COLOUR;
  const t = Math.max(-1, Math.min(1, value / limit));
  return t < 0 ? bttTintRGB("#3b6fb6", 0.15 + 0.85 * -t) : bttTintRGB("#c8453b", 0.15 + 0.85 * t);
}

export function bttDiverging(value, limit) {
  return bttRGBString(bttDivergingRGB(value, limit));
}

// Sequential scale on [0, 1].
export function bttSequentialRGB(t) {
  if (!Number.isFinite(t)) return BTT_NO_COLOUR;
  return bttTintRGB("#5b3f8c", 0.1 + 0.9 * Math.max(0, Math.min(1, t)));
}

export function bttSequential(t) {
  return bttRGBString(bttSequentialRGB(t));
}

export function bttFormat(value, digits = 4) {
  if (value === null || value === undefined || Number.isNaN(value)) return "n/a";
  if (!Number.isFinite(value)) return String(value);
  if (Number.isInteger(value) && Math.abs(value) < 1e9) return String(value);
  const magnitude = Math.abs(value);
  if (magnitude !== 0 && (magnitude < 1e-3 || magnitude >= 1e6)) return value.toExponential(digits - 1);
  return String(Number(value.toPrecision(digits)));
}

// Tick labels with the fewest significant digits (at least `digits`) that
// tell every tick apart: ticks 3.245, 3.25, 3.255 read so, not "3.25" thrice.
export function bttTickLabels(ticks, digits = 3) {
  for (let d = digits; d <= 12; d++) {
    const labels = ticks.map((tick) => bttFormat(tick, d));
    if (new Set(labels).size === labels.length) return labels;
  }
  return ticks.map((tick) => String(tick));
}

export function bttElement(tag, className, text) {
  const element = document.createElement(tag);
  if (className) element.className = className;
  if (text !== undefined) element.textContent = text;
  return element;
}

// A canvas that follows its container's width and the device pixel ratio.
// draw(context, width, height) is called on every resize and by redraw().
export function bttCanvas(container, height, draw) {
  const canvas = bttElement("canvas", "btt-canvas");
  canvas.style.height = `${height}px`;
  container.appendChild(canvas);
  const context = canvas.getContext("2d");
  let pending = false;
  const state = { width: 0, height };
  function paint() {
    pending = false;
    // a hidden canvas (display: none somewhere above) has no width: paint
    // nothing at a guessed one, the ResizeObserver calls again once it shows
    if (!canvas.clientWidth) return;
    const ratio = window.devicePixelRatio || 1;
    const width = Math.max(50, canvas.clientWidth);
    if (canvas.width !== Math.round(width * ratio) || canvas.height !== Math.round(state.height * ratio)) {
      canvas.width = Math.round(width * ratio);
      canvas.height = Math.round(state.height * ratio);
    }
    state.width = width;
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    context.clearRect(0, 0, width, state.height);
    draw(context, width, state.height);
    // a new bitmap can move the layout it was sized from: paint again at the box it settles
    // in. Look again on the next frame too: the box read above can be a layout that settles
    // back within this frame (a theme's style sheet applied in between), before the
    // ResizeObserver looks, and then the observer sees no change to report
    settled();
    requestAnimationFrame(settled);
  }
  function settled() {
    if (canvas.clientWidth && Math.max(50, canvas.clientWidth) !== state.width) redraw();
  }
  function redraw() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(paint);
  }
  // the container too: a canvas's own box can lag its container's (a flex item
  // sized from the canvas's previous bitmap), and then only the container's change is seen
  const observer = new ResizeObserver(redraw);
  observer.observe(canvas);
  observer.observe(container);
  // and a look twice a second, until the panel disposes of it: a theme change has still left
  // a canvas painted at a box it held for less than a frame, which no observer reports (the
  // first-view test's 1068 px bitmap in a 966 px box, in about one CI run of eight)
  const poll = setInterval(() => {
    if (canvas.isConnected) settled();
  }, 500);
  function dispose() {
    clearInterval(poll);
    observer.disconnect();
  }
  return {
    canvas,
    context,
    state,
    redraw,
    setHeight(value) {
      state.height = value;
      canvas.style.height = `${value}px`;
      redraw();
    },
    dispose,
  };
}

// Neighbouring float32 values (thresholds are compared with float32 inputs
// by sklearn and XGBoost).
const bttF32 = new Float32Array(1);
const bttU32 = new Uint32Array(bttF32.buffer);
function bttNextFloat32(value, up) {
  bttF32[0] = value;
  if (bttF32[0] === 0) return up ? 1.4e-45 : -1.4e-45;
  if ((bttF32[0] > 0) === up) bttU32[0] += 1;
  else bttU32[0] -= 1;
  return bttF32[0];
}

// The shortest decimal that reads as the float32 the library compares
// inputs with: 16.82 rather than 16.81999969 (XGBoost, x < t) or
// 810.3000183105469 (sklearn's float64 midpoint: float32(x) <= t holds
// exactly when float32(x) <= the largest float32 below t). Inputs at the
// shown number go where the model sends them. rule "le": x <= t, "lt": x < t.
// Boxes on the canvas ask for at most 6 digits (rounded beyond that); the
// details pane shows the exact reading.
export function bttThreshold(value, rule = "le", maxDigits = 9) {
  if (!Number.isFinite(value)) return String(value);
  let target = Math.fround(value);
  if (rule === "lt" && target < value) target = bttNextFloat32(target, true);
  if (rule !== "lt" && target > value) target = bttNextFloat32(target, false);
  for (let digits = 1; digits <= maxDigits; digits++) {
    const shown = Number(value.toPrecision(digits));
    if (shown === value || Math.fround(shown) === target) return String(shown);
  }
  return maxDigits < 9 ? String(Number(value.toPrecision(maxDigits))) : String(value);
}

// A fill light enough for dark text at WCAG AA (4.5:1): mid-tone fills are
// blended towards white until #111 text reads on them.
export function bttReadableFill(packed) {
  let rgb = [(packed >> 16) & 255, (packed >> 8) & 255, packed & 255];
  for (let step = 0; step < 12; step++) {
    const colour = (rgb[0] << 16) | (rgb[1] << 8) | rgb[2];
    if (bttContrast(colour, "#111111") >= 4.6 || bttContrast(colour, "#ffffff") >= 4.6) return colour;
    rgb = rgb.map((c) => Math.round(c + (255 - c) * 0.12));
  }
  return (rgb[0] << 16) | (rgb[1] << 8) | rgb[2];
}

// Colours of the page around a panel, from JupyterLab's --jp-* variables
// (light, dark and high-contrast themes), with light fallbacks elsewhere.
export function bttTheme(element) {
  const style = getComputedStyle(element);
  const read = (name, fallback) => (style.getPropertyValue(name) || "").trim() || fallback;
  return {
    background: read("--jp-layout-color0", "#ffffff"),
    text: read("--jp-ui-font-color0", "#111111"),
    muted: read("--jp-ui-font-color1", "#333333"),
    edge: read("--jp-ui-font-color2", "#8a8a8a"),
    border: read("--jp-border-color1", "#bdbdbd"),
    path: read("--jp-brand-color1", "#1f5fbf"),
  };
}

// Relative luminance and contrast ratio (WCAG 2.x) of CSS colours; used to
// pick dark or light text on a node's fill.
function bttParseColour(text) {
  if (typeof text === "number") return [(text >> 16) & 255, (text >> 8) & 255, text & 255];
  text = String(text).trim();
  if (text[0] === "#") {
    let hex = text.slice(1);
    if (hex.length === 3) hex = hex.split("").map((c) => c + c).join("");
    return bttHexToRgb("#" + hex.slice(0, 6));
  }
  const numbers = text.match(/[\d.]+/g);
  return numbers ? numbers.slice(0, 3).map(Number) : [255, 255, 255];
}

function bttLuminance(colour) {
  const [r, g, b] = bttParseColour(colour).map((c) => {
    const v = c / 255;
    return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

function bttContrast(a, b) {
  const [light, dark] = [bttLuminance(a), bttLuminance(b)].sort((p, q) => q - p);
  return (light + 0.05) / (dark + 0.05);
}

// Black or white, whichever reads better on the fill.
export function bttTextOn(fill) {
  return bttContrast(fill, "#111111") >= bttContrast(fill, "#ffffff") ? "#111111" : "#ffffff";
}

// Redraw when the JupyterLab theme changes (it sets data-jp-theme-name on
// the body); returns a function that stops watching.
export function bttOnThemeChange(callback) {
  const observer = new MutationObserver(callback);
  observer.observe(document.body, { attributes: true, attributeFilter: ["data-jp-theme-name", "data-jp-theme-light"] });
  return () => observer.disconnect();
}

// About `count` round tick values covering [low, high] (1, 2 or 5 times a
// power of ten apart); integer steps only when `integer` (counts, rounds).
export function bttTicks(low, high, count = 5, integer = false) {
  if (!(high > low)) return [low];
  let step = (high - low) / Math.max(1, count);
  const power = 10 ** Math.floor(Math.log10(step));
  const unit = step / power;
  step = (unit < 1.5 ? 1 : unit < 3 ? 2 : unit < 7 ? 5 : 10) * power;
  if (integer) step = Math.max(1, Math.round(step));
  const ticks = [];
  for (let value = Math.ceil(low / step) * step; value <= high + step * 1e-9; value += step) {
    ticks.push(Math.abs(value) < step * 1e-9 ? 0 : Number(value.toPrecision(12)));
  }
  return ticks;
}
