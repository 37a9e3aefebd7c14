// Live charts of a bandit run: reward per round (with its running mean),
// mean reward per arm, and the validation score versus the number of pruned
// branches. Redrawn on every update Python sends (at most ~10 per second).
//
// Synced traits (Python: bandit_tree_tools/widgets/_reward_chart.py):
//   rounds {x, reward, running: float32 buffers; n_done, n_total, family}
//   arms   {mean, pulls: float32 buffers; pruned: uint8 buffer; label}
//   path   {n_pruned: [...], score: [...], chosen}
//   state  "idle" | "running" | "stopping" | "done" | "stopped" | "error"

function axes(ctx, box, low, high, xLabel, yLabel, xMax) {
  ctx.strokeStyle = "#bbb";
  ctx.lineWidth = 1;
  ctx.strokeRect(box.x, box.y, box.w, box.h);
  ctx.fillStyle = "#555";
  ctx.font = "10px sans-serif";
  ctx.textAlign = "right";
  ctx.textBaseline = "middle";
  ctx.fillText(bttFormat(high, 3), box.x - 3, box.y + 4);
  ctx.fillText(bttFormat(low, 3), box.x - 3, box.y + box.h - 4);
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  ctx.fillText(xLabel, box.x + box.w / 2, box.y + box.h + 3);
  if (xMax !== undefined) {
    ctx.textAlign = "right";
    ctx.fillText(bttFormat(xMax), box.x + box.w, box.y + box.h + 3);
    ctx.textAlign = "left";
    ctx.fillText("0", box.x, box.y + box.h + 3);
  }
  ctx.save();
  ctx.translate(10, box.y + box.h / 2);
  ctx.rotate(-Math.PI / 2);
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(yLabel, 0, 0);
  ctx.restore();
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

function message(ctx, width, height, text) {
  ctx.fillStyle = "#888";
  ctx.font = "12px sans-serif";
  ctx.textAlign = "center";
  ctx.textBaseline = "middle";
  ctx.fillText(text, width / 2, height / 2);
}

export default {
  render({ model, el }) {
    const root = bttElement("div", "btt-reward-chart");
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
    pathBox.appendChild(bttElement("div", "btt-chart-title", "Validation score vs. pruned branches"));
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
      chart.redraw();
      armChart.redraw();
      pathChart.redraw();
    }

    const chart = bttCanvas(top, 170, (ctx, width, height) => {
      if (!rounds || !rounds.done) return message(ctx, width, height, "no rounds yet");
      const box = { x: 44, y: 6, w: width - 54, h: height - 24 };
      const [low, high] = range([...rounds.reward, ...rounds.running]);
      // the x axis follows the rounds played, so a long run is readable early
      const span = Math.max(10, rounds.done);
      axes(ctx, box, low, high, "round", "reward", span);
      const px = (xv) => box.x + (xv / span) * box.w;
      const py = (yv) => box.y + box.h - ((yv - low) / (high - low)) * box.h;
      ctx.fillStyle = "rgba(78, 121, 167, 0.45)";
      for (let k = 0; k < rounds.x.length; k++) ctx.fillRect(px(rounds.x[k]) - 1, py(rounds.reward[k]) - 1, 2, 2);
      ctx.strokeStyle = "#c8453b";
      ctx.lineWidth = 1.6;
      ctx.beginPath();
      for (let k = 0; k < rounds.x.length; k++) {
        if (k === 0) ctx.moveTo(px(rounds.x[k]), py(rounds.running[k]));
        else ctx.lineTo(px(rounds.x[k]), py(rounds.running[k]));
      }
      ctx.stroke();
    });

    const armChart = bttCanvas(armBox, 150, (ctx, width, height) => {
      if (!arms || !arms.mean.length) return message(ctx, width, height, "no arms yet");
      const box = { x: 44, y: 6, w: width - 50, h: height - 24 };
      let high = 0;
      for (const v of arms.mean) high = Math.max(high, v);
      high = high || 1;
      axes(ctx, box, 0, high, arms.label || "arm", "mean reward");
      const barW = box.w / arms.mean.length;
      for (let k = 0; k < arms.mean.length; k++) {
        const h = (arms.mean[k] / high) * box.h;
        ctx.fillStyle = arms.pruned && arms.pruned[k] ? "#c8453b" : "#4e79a7";
        ctx.fillRect(box.x + k * barW + (barW > 3 ? 0.5 : 0), box.y + box.h - h, Math.max(1, barW - (barW > 3 ? 1 : 0)), h);
      }
    });

    const pathChart = bttCanvas(pathBox, 150, (ctx, width, height) => {
      const path = model.get("path") || {};
      const xs = path.n_pruned || [];
      const ys = path.score || [];
      if (!xs.length) return message(ctx, width, height, "shown when the run ends");
      const box = { x: 44, y: 6, w: width - 50, h: height - 24 };
      const [low, high] = range(ys);
      const xMax = Math.max(1, xs[xs.length - 1]);
      axes(ctx, box, low, high, "pruned branches", "score", xMax);
      const px = (xv) => box.x + (xv / xMax) * box.w;
      const py = (yv) => box.y + box.h - ((yv - low) / (high - low)) * box.h;
      ctx.strokeStyle = "#4e79a7";
      ctx.lineWidth = 1.5;
      ctx.beginPath();
      xs.forEach((xv, k) => (k ? ctx.lineTo(px(xv), py(ys[k])) : ctx.moveTo(px(xv), py(ys[k]))));
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
    });

    const onChange = () => load();
    for (const name of ["rounds", "arms", "path", "state"]) model.on(`change:${name}`, onChange);
    load();
    return () => {
      for (const name of ["rounds", "arms", "path", "state"]) model.off(`change:${name}`, onChange);
      chart.dispose();
      armChart.dispose();
      pathChart.dispose();
    };
  },
};
