// The medoid prototypes of one leaf: images when an image shape is given
// (e.g. 8x8 digits), otherwise a table with one column per medoid.
//
// Synced traits (Python: bandit_tree_tools/widgets/_medoid_panel.py):
//   prototypes  float32 buffer (n_medoids x n_features), n_medoids, n_features
//   rows, sizes          row index in X and cluster size of each medoid
//   image_shape [h, w] or [], value_range [low, high] (shared by every leaf)
//   feature_names, title, info, message, labels (class of each medoid row)
//   cells       the table's text (n_medoids x n_features): each medoid row's values as X holds them,
//               a category's label rather than its code (empty when images are drawn)

import { bttColumn, bttElement } from "./common.js";

const MISSING_RGB = [255, 205, 205]; // a pixel whose value is NaN (the static view draws the same)

export default {
  render({ model, el }) {
    const root = bttElement("div", "btt-medoid-gallery");
    el.appendChild(root);
    const title = bttElement("div", "btt-chart-title btt-medoid-title");
    const info = bttElement("div", "btt-chart-caption btt-medoid-info");
    const note = bttElement("div", "btt-medoid-message");
    const body = bttElement("div", "btt-medoid-body");
    root.append(title, info, note, body);

    function draw() {
      title.textContent = model.get("title") || "";
      info.textContent = model.get("info") || "";
      note.textContent = model.get("message") || "";
      note.style.display = note.textContent ? "block" : "none";
      body.textContent = "";
      const k = model.get("n_medoids") || 0;
      const width = model.get("n_features") || 0;
      const values = bttColumn(model.get("prototypes"), Float32Array);
      root.dataset.medoids = String(k);
      if (!k || !values) return;
      const rows = model.get("rows") || [];
      const sizes = model.get("sizes") || [];
      const labels = model.get("labels") || [];
      const shape = model.get("image_shape") || [];
      if (shape.length === 2) {
        const [h, w] = shape;
        const [low, high] = model.get("value_range") || [0, 1];
        const span = high - low || 1;
        const scale = Math.max(2, Math.floor(96 / Math.max(h, w)));
        const grid = bttElement("div", "btt-medoid-grid");
        for (let m = 0; m < k; m++) {
          const card = bttElement("div", "btt-medoid-card");
          const canvas = document.createElement("canvas");
          canvas.width = w;
          canvas.height = h;
          canvas.style.width = `${w * scale}px`;
          canvas.style.height = `${h * scale}px`;
          const ctx = canvas.getContext("2d");
          const image = ctx.createImageData(w, h);
          for (let p = 0; p < h * w; p++) {
            // dark ink on white, like the digits are usually drawn; a missing value (NaN) pale red
            const value = values[m * width + p];
            const grey = Math.round(255 * (1 - Math.max(0, Math.min(1, (value - low) / span))));
            const [red, green, blue] = Number.isNaN(value) ? MISSING_RGB : [grey, grey, grey];
            image.data[4 * p] = red;
            image.data[4 * p + 1] = green;
            image.data[4 * p + 2] = blue;
            image.data[4 * p + 3] = 255;
          }
          ctx.putImageData(image, 0, 0);
          card.appendChild(canvas);
          card.appendChild(bttElement("div", "btt-medoid-caption", `row ${rows[m]}` + (labels.length ? ` · class ${labels[m]}` : "")));
          card.appendChild(bttElement("div", "btt-medoid-size", `${sizes[m]} ${sizes[m] === 1 ? "row" : "rows"} nearest`));
          grid.appendChild(card);
        }
        body.appendChild(grid);
        return;
      }
      const names = model.get("feature_names") || [];
      const cells = model.get("cells") || [];
      const table = bttElement("table", "btt-medoid-table");
      const head = bttElement("tr");
      head.appendChild(bttElement("th", "", "feature"));
      for (let m = 0; m < k; m++) head.appendChild(bttElement("th", "", `row ${rows[m]} (${sizes[m]})`));
      table.appendChild(head);
      if (labels.length) {
        const line = bttElement("tr", "btt-medoid-classes");
        const name = bttElement("th", "", "class (y)");
        name.style.textAlign = "left";
        line.appendChild(name);
        for (let m = 0; m < k; m++) line.appendChild(bttElement("td", "", labels[m]));
        table.appendChild(line);
      }
      for (let f = 0; f < width; f++) {
        const line = bttElement("tr");
        const name = bttElement("th", "", names[f] !== undefined ? String(names[f]) : `x[${f}]`);
        name.style.textAlign = "left";
        line.appendChild(name);
        for (let m = 0; m < k; m++) line.appendChild(bttElement("td", "", cells[m * width + f] ?? ""));
        table.appendChild(line);
      }
      body.appendChild(table);
    }

    const names = ["prototypes", "n_medoids", "n_features", "rows", "sizes", "image_shape", "value_range",
      "feature_names", "title", "info", "message", "labels", "cells"];
    // one update from Python changes several traits: draw once for all of them
    let pending = false;
    const schedule = () => {
      if (pending) return;
      pending = true;
      queueMicrotask(() => {
        pending = false;
        draw();
      });
    };
    for (const name of names) model.on(`change:${name}`, schedule);
    draw();
    return () => {
      for (const name of names) model.off(`change:${name}`, schedule);
    };
  },
};
