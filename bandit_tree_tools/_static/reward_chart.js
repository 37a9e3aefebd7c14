// Live charts of a bandit run: reward per round (with its running mean),
// mean reward per arm, and the validation score versus the number of pruned
// branches. Redrawn on every update Python sends (at most ~10 per second).
//
// Synced traits (Python: bandit_tree_tools/widgets/_reward_chart.py):
//   rounds {x, reward, running: float32 buffers; n_done, n_total, family}
//   arms   {mean, pulls: float32 buffers; pruned: uint8 buffer; label}
//   path   {n_pruned: [...], score: [...], chosen; x_label, y_label, floor (optional)}
//   state  "idle" | "running" | "stopping" | "done" | "stopped" | "error"

// A frame with ticks and labels on both axes, in the page's theme colours.
// x runs over [xLow, xHigh] (integers: rounds, arms, branches).
import { bttColumn, bttFormat, bttElement, bttCanvas, bttTheme, bttOnThemeChange, bttTicks, bttTickLabels } from "./common.js";

const Y_MARGIN = 62;

// Returns the box of every label it wrote (canvas pixels; the rotated y
// title as drawn), so tests can check that none overlaps another.
function axes(ctx, box, low, high, xLabel, yLabel, xLow, xHigh, theme) {
  const written = [];
  const text = (label, left, top, width, height, kind) =>
    written.push({ label, kind, left, right: left + width, top, bottom: top + height });
  ctx.strokeStyle = theme.border;
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x, box.y, box.w, box.h);
  ctx.fillStyle = theme.muted;
  ctx.font = "10px sans-serif";
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  const py = (v) => box.y + box.h - ((v - low) / (high - low)) * box.h;
  const yTicks = bttTicks(low, high, 4);
  const yLabels = bttTickLabels(yTicks, 3);
  yTicks.forEach((tick, k) => {
    const y = py(tick);
    ctx.fillRect(box.x - 3, y, 3, 1);
    ctx.fillText(yLabels[k], box.x - 5, y);
    const w = ctx.measureText(yLabels[k]).width;
    text(yLabels[k], box.x - 5 - w, y - 5, w, 10, "y tick");
  });
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  const px = (v) => box.x + ((v - xLow) / (xHigh - xLow || 1)) * box.w;
  const xTicks = bttTicks(xLow, xHigh, Math.max(2, Math.floor(box.w / 70)), true);
  const xLabels = bttTickLabels(xTicks, 4);
  xTicks.forEach((tick, k) => {
    const x = px(tick);
    ctx.fillRect(x, box.y + box.h, 1, 3);
    ctx.fillText(xLabels[k], x, box.y + box.h + 4);
    const w = ctx.measureText(xLabels[k]).width;
    text(xLabels[k], x - w / 2, box.y + box.h + 4, w, 10, "x tick");
  });
  ctx.textAlign = "right";
  ctx.fillText(xLabel, box.x + box.w, box.y + box.h + 16);
  const xw = ctx.measureText(xLabel).width;
  text(xLabel, box.x + box.w - xw, box.y + box.h + 16, xw, 10, "x title");
  ctx.save();
  ctx.translate(9, box.y + box.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();
  const yw = ctx.measureText(yLabel).width;
  text(yLabel, 9 - 5, box.y + box.h / 2 - yw / 2, 10, yw, "y title");
  return written;
}

// The value under the pointer, drawn as a small label next to it.
function hoverLabel(ctx, box, x, y, text, theme) {
  ctx.font = "11px sans-serif";
  const w = ctx.measureText(text).width + 8;
  const left = Math.min(box.x + box.w - w, Math.max(box.x, x + 8));
  const top = Math.max(box.y, y - 22);
  ctx.fillStyle = theme.background;
  ctx.strokeStyle = theme.border;
  ctx.fillRect(left, top, w, 17);
  ctx.strokeRect(left, top, w, 17);
  ctx.fillStyle = theme.text;
  ctx.textAlign = "left";
  ctx.textBaseline = "middle";
  ctx.fillText(text, left + 4, top + 9);
}

function range(values) {
  let low = Infinity;
  let high = -Infinity;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    if (v < low) low = v;
    if (v > high) high = v;
  }
  if (low === Infinity) return [0, 1];
  if (low === high) return [low - 0.5, high + 0.5];
  const pad = (high - low) * 0.05;
  return [low - pad, high + pad];
}

function message(ctx, width, height, text, theme) {
  ctx.fillStyle = theme.muted;
  ctx.font = "12px sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, width / 2, height / 2);
}

export default {
  render({ model, el }) {
    const root = bttElement("div", "btt-reward-chart");
    // the axis labels each chart last wrote, and its size (for tests): {rounds, arms, path}
    const axisLabels = {};
    root.bttAxisLabels = () => axisLabels;
    el.appendChild(root);
    const top = bttElement("div", "btt-chart btt-chart-rounds");
    top.appendChild(bttElement("div", "btt-chart-title", "Reward per round"));
    const caption = bttElement("div", "btt-chart-caption");
    top.appendChild(caption);
    root.appendChild(top);
    const row = bttElement("div", "btt-chart-row");
    row.style.display = "flex";
    row.style.gap = "12px";
    const armBox = bttElement("div", "btt-chart btt-chart-arms");
    armBox.style.flex = "1 1 0";
    armBox.appendChild(bttElement("div", "btt-chart-title", "Mean reward per arm"));
    const pathBox = bttElement("div", "btt-chart btt-chart-path");
    pathBox.style.flex = "1 1 0";
    const pathTitle = bttElement("div", "btt-chart-title", "Validation score vs. pruned branches");
    pathBox.appendChild(pathTitle);
    row.append(armBox, pathBox);
    root.appendChild(row);

    let rounds = null;
    let arms = null;

    function load() {
      const r = model.get("rounds") || {};
      rounds = {
        x: bttColumn(r.x, Float32Array) || new Float32Array(0),
        reward: bttColumn(r.reward, Float32Array) || new Float32Array(0),
        running: bttColumn(r.running, Float32Array) || new Float32Array(0),
        done: r.n_done || 0,
        total: r.n_total || 0,
        family: r.family || "",
      };
      const a = model.get("arms") || {};
      arms = {
        mean: bttColumn(a.mean, Float32Array) || new Float32Array(0),
        pulls: bttColumn(a.pulls, Float32Array) || new Float32Array(0),
        pruned: bttColumn(a.pruned, Uint8Array),
        label: a.label || "",
      };
      root.dataset.rounds = String(rounds.done);
      root.dataset.arms = String(arms.mean.length);
      root.dataset.state = model.get("state") || "idle";
      const state = model.get("state") || "idle";
      caption.textContent = rounds.done
        ? `${rounds.done} of ${rounds.total} rounds (${state}); dots: mean reward of ${rounds.x.length < rounds.done ? "a bin of rounds" : "each round"}, line: running mean` +
          (rounds.family === "bernoulli" ? "; rewards are 1 when pruning raised the score" : "")
        : state === "running" ? "starting…" : "Press Start to run the bandit.";
      pathTitle.textContent = (model.get("path") || {}).title || "Validation score vs. pruned branches";
      // btt.prune has no rounds or arms: its path alone, full width
      const pathOnly = model.get("mode") === "path";
      top.style.display = pathOnly ? "none" : "";
      armBox.style.display = pathOnly ? "none" : "";
      chart.redraw();
      armChart.redraw();
      pathChart.redraw();
    }

    let theme = bttTheme(root);
    const hover = { rounds: null, arms: null, path: null }; // pointer x in each chart
    // the left margin holds the y title (centred at x = 9) and tick labels of up to 7 characters
    const BOX = (width, height) => ({ x: Y_MARGIN, y: 6, w: width - Y_MARGIN - 10, h: height - 36 });

    const chart = bttCanvas(top, 180, (ctx, width, height) => {
      if (!rounds || !rounds.done) return message(ctx, width, height, "no rounds yet", theme);
      const box = BOX(width, height);
      const [low, high] = range([...rounds.reward, ...rounds.running]);
      // the x axis follows the rounds played, so a long run is readable early
      const span = Math.max(10, rounds.done);
      axisLabels.rounds = { width, height, items: axes(ctx, box, low, high, "round", "reward", 0, span, theme) };
      const px = (xv) => box.x + (xv / span) * box.w;
      const py = (yv) => box.y + box.h - ((yv - low) / (high - low)) * box.h;
      const binned = rounds.x.length < rounds.done;
      ctx.fillStyle = "rgba(78, 121, 167, 0.6)";
      const dot = binned ? 3 : 2;
      for (let k = 0; k < rounds.x.length; k++) ctx.fillRect(px(rounds.x[k]) - dot / 2, py(rounds.reward[k]) - dot / 2, dot, dot);
      ctx.strokeStyle = "#c8453b";
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      for (let k = 0; k < rounds.x.length; k++) {
        if (k === 0) ctx.moveTo(px(rounds.x[k]), py(rounds.running[k]));
        else ctx.lineTo(px(rounds.x[k]), py(rounds.running[k]));
      }
      ctx.stroke();
      if (hover.rounds !== null && rounds.x.length) {
        const target = ((hover.rounds - box.x) / box.w) * span;
        let k = 0;
        while (k + 1 < rounds.x.length && Math.abs(rounds.x[k + 1] - target) <= Math.abs(rounds.x[k] - target)) k++;
        const what = binned ? `rounds near ${Math.round(rounds.x[k])}: mean` : `round ${Math.round(rounds.x[k])}: reward`;
        hoverLabel(ctx, box, px(rounds.x[k]), py(rounds.reward[k]),
          `${what} ${bttFormat(rounds.reward[k], 3)} · running mean ${bttFormat(rounds.running[k], 3)}`, theme);
        root.dataset.hover = "rounds";
      }
    });

    const armChart = bttCanvas(armBox, 160, (ctx, width, height) => {
      if (!arms || !arms.mean.length) return message(ctx, width, height, "no arms yet", theme);
      const box = BOX(width, height);
      let high = 0;
      for (const v of arms.mean) high = Math.max(high, v);
      high = high || 1;
      const n = arms.mean.length;
      axisLabels.arms = { width, height, items: axes(ctx, box, 0, high, arms.label || "arm", "mean reward", 0, n, theme) };
      const barW = box.w / n;
      for (let k = 0; k < n; k++) {
        const h = (arms.mean[k] / high) * box.h;
        ctx.fillStyle = arms.pruned && arms.pruned[k] ? "#c8453b" : "#4e79a7";
        ctx.fillRect(box.x + k * barW + (barW > 3 ? 0.5 : 0), box.y + box.h - h, Math.max(1, barW - (barW > 3 ? 1 : 0)), h);
      }
      if (hover.arms !== null) {
        const k = Math.max(0, Math.min(n - 1, Math.floor((hover.arms - box.x) / barW)));
        hoverLabel(ctx, box, box.x + (k + 0.5) * barW, box.y + box.h - (arms.mean[k] / high) * box.h,
          `arm ${k}: mean ${bttFormat(arms.mean[k], 3)} over ${bttFormat(arms.pulls[k])} pulls` +
          (arms.pruned && arms.pruned[k] ? " (pruned)" : ""), theme);
        root.dataset.hover = "arms";
      }
    });

    const pathChart = bttCanvas(pathBox, 160, (ctx, width, height) => {
      const path = model.get("path") || {};
      const xs = path.n_pruned || [];
      const ys = path.score || [];
      if (!xs.length) return message(ctx, width, height, "shown when the run ends", theme);
      const box = BOX(width, height);
      const [low, high] = range(ys);
      const xMin = Math.min(0, ...xs);
      const xMax = Math.max(xMin + 1, ...xs);
      axisLabels.path = { width, height, items: axes(ctx, box, low, high, path.x_label || "pruned branches", path.y_label || "score", xMin, xMax, theme) };
      const px = (xv) => box.x + ((xv - xMin) / (xMax - xMin)) * box.w;
      const py = (yv) => box.y + box.h - ((yv - low) / (high - low)) * box.h;
      if (Number.isFinite(path.floor)) {
        // the lowest score the tolerance accepts
        ctx.strokeStyle = theme.muted;
        ctx.setLineDash([4, 3]);
        ctx.beginPath();
        ctx.moveTo(box.x, py(path.floor));
        ctx.lineTo(box.x + box.w, py(path.floor));
        ctx.stroke();
        ctx.setLineDash([]);
      }
      ctx.strokeStyle = "#4e79a7";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      // a walk goes towards fewer leaves: a step back up starts a further walk (its own line)
      xs.forEach((xv, k) => (k && xv <= xs[k - 1] ? ctx.lineTo(px(xv), py(ys[k])) : ctx.moveTo(px(xv), py(ys[k]))));
      ctx.stroke();
      ctx.fillStyle = "#4e79a7";
      xs.forEach((xv, k) => ctx.fillRect(px(xv) - 2, py(ys[k]) - 2, 4, 4));
      if (path.chosen !== undefined && path.chosen >= 0 && path.chosen < xs.length) {
        ctx.strokeStyle = "#c8453b";
        ctx.lineWidth = 2;
        ctx.beginPath();
        ctx.arc(px(xs[path.chosen]), py(ys[path.chosen]), 5, 0, 2 * Math.PI);
        ctx.stroke();
      }
      if (hover.path !== null) {
        const target = xMin + ((hover.path - box.x) / box.w) * (xMax - xMin);
        let k = 0;
        for (let j = 1; j < xs.length; j++) if (Math.abs(xs[j] - target) < Math.abs(xs[k] - target)) k = j;
        hoverLabel(ctx, box, px(xs[k]), py(ys[k]), `${path.x_label || "pruned branches"} ${bttFormat(xs[k])}: ${path.y_label || "score"} ${bttFormat(ys[k], 4)}`, theme);
        root.dataset.hover = "path";
      }
    });

    for (const [name, view] of [["rounds", chart], ["arms", armChart], ["path", pathChart]]) {
      view.canvas.addEventListener("mousemove", (event) => {
        hover[name] = event.clientX - view.canvas.getBoundingClientRect().left;
        view.redraw();
      });
      view.canvas.addEventListener("mouseleave", () => {
        hover[name] = null;
        view.redraw();
      });
    }
    const stopWatchingTheme = bttOnThemeChange(() => {
      theme = bttTheme(root);
      chart.redraw();
      armChart.redraw();
      pathChart.redraw();
    });

    const onChange = () => load();
    for (const name of ["rounds", "arms", "path", "state", "mode"]) model.on(`change:${name}`, onChange);
    load();
    return () => {
      for (const name of ["rounds", "arms", "path", "state", "mode"]) model.off(`change:${name}`, onChange);
      stopWatchingTheme();
      chart.dispose();
      armChart.dispose();
      pathChart.dispose();
    };
  },
};
