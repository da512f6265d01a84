/* attention_edu's attention explorer: no request to any host, no kernel. Each explorer
   reads its own data from the <script type="application/json"> inside it, so several
   explorers on one page (or the same one shown twice) never share state. */
(function () {
  "use strict";

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function floats(b64) {
    var bin = atob(b64), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new Float32Array(bytes.buffer);
  }

  function colour(palette, t) {  // viridis, interpolated between the palette's stops
    t = Math.min(Math.max(t, 0), 1) * (palette.length - 1);
    var i = Math.min(Math.floor(t), palette.length - 2), f = t - i, out = "#";
    for (var k = 1; k < 7; k += 2) {
      var a = parseInt(palette[i].substr(k, 2), 16), b = parseInt(palette[i + 1].substr(k, 2), 16);
      var c = Math.round(a + (b - a) * f).toString(16);
      out += c.length < 2 ? "0" + c : c;
    }
    return out;
  }

  function iso(label) {  // a label isolated from the sentence around it: a right-to-left one cannot reverse the rest
    return "\u2068" + label + "\u2069";
  }

  function esc(text) {
    return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
  }

  function entropy(row) {
    var h = 0;
    for (var j = 0; j < row.length; j++) if (row[j] > 0) h -= row[j] * Math.log(row[j]);
    return h;
  }

  function init(root) {
    if (!root || root.getAttribute("data-ae-ready")) return;
    root.setAttribute("data-ae-ready", "1");
    var d = JSON.parse(root.querySelector("script.ae-data").textContent);
    var L = d.L, H = d.H, m = d.m, n = d.n, size = m * n;
    var given = floats(d.weights), scores = d.scores ? floats(d.scores) : null, mask = d.mask || null;
    var state = {layer: 0, head: 0, row: 0, scale: null, applyMask: true};

    function allowed(v, i, j) { return !mask || mask.charCodeAt(v * size + i * n + j) === 49; }

    function headWeights(l, h) {  // (m*n) weights of one head in the current state
      var v = l * H + h, out = new Float64Array(size), useMask = mask && state.applyMask;
      if (!scores || (state.scale === null && (state.applyMask || !mask))) {
        for (var k = 0; k < size; k++) out[k] = given[v * size + k];
        return out;
      }
      var scale = state.scale === null ? sliderScale() : state.scale;
      for (var i = 0; i < m; i++) {
        var top = -Infinity, j, x, total = 0;
        for (j = 0; j < n; j++) if (!useMask || allowed(v, i, j)) top = Math.max(top, scale * scores[v * size + i * n + j]);
        if (top === -Infinity) continue;  // a fully masked row: all zero
        for (j = 0; j < n; j++) {
          x = (!useMask || allowed(v, i, j)) ? Math.exp(scale * scores[v * size + i * n + j] - top) : 0;
          out[i * n + j] = x; total += x;
        }
        for (j = 0; j < n; j++) out[i * n + j] /= total;
      }
      return out;
    }

    function viewWeights() {
      if (state.head >= 0) return headWeights(state.layer, state.head);
      var avg = new Float64Array(size);
      for (var h = 0; h < H; h++) {
        var w = headWeights(state.layer, h);
        for (var k = 0; k < size; k++) avg[k] += w[k] / H;
      }
      return avg;
    }

    // ---- the controls ----
    var ui = el("div", "ae-ui"), controls = el("div", "ae-controls");
    ui.appendChild(controls);
    function select(label, options, onchange) {
      var lab = el("label", null, label + " "), sel = el("select");
      options.forEach(function (o, k) { var opt = el("option", null, o[1]); opt.value = o[0]; sel.appendChild(opt); });
      sel.addEventListener("change", function () { onchange(parseInt(sel.value, 10)); draw(); });
      lab.appendChild(sel); controls.appendChild(lab);
      return sel;
    }
    if (L > 1) select("layer", Array.from({length: L}, function (_, l) { return [l, String(l + 1)]; }),
                      function (v) { state.layer = v; });
    if (H > 1) {
      var heads = Array.from({length: H}, function (_, h) { return [h, "head " + (h + 1)]; });
      heads.push([-1, "average of heads"]);
      select("view", heads, function (v) { state.head = v; }).className = "ae-head";
    }
    var slider = null, scaleText = null;
    function sliderScale() { return Math.pow(2, parseFloat(slider.value)); }
    if (scores) {
      var box = el("span", "ae-scale-box", "scale: ");
      slider = el("input", "ae-scale");
      slider.type = "range"; slider.min = "-6"; slider.max = "3"; slider.step = "0.01";
      slider.value = d.d_k ? String(-0.5 * Math.log2(d.d_k)) : "0";
      slider.setAttribute("aria-label", "scale applied to the scores before the softmax (log2)");
      slider.addEventListener("input", function () { state.scale = sliderScale(); draw(); });
      var presets = [["1", 1]];
      if (d.d_k) presets.push(["1/\u221a" + d.d_k, 1 / Math.sqrt(d.d_k)]);
      presets.forEach(function (p, k) {
        var b = el("button", "ae-preset ae-preset-" + k, p[0]);
        b.type = "button";
        b.addEventListener("click", function () { state.scale = p[1]; slider.value = String(Math.log2(p[1])); draw(); });
        box.appendChild(b);
      });
      box.appendChild(slider);
      scaleText = el("span", "ae-scale-value");
      box.appendChild(scaleText);
      controls.appendChild(box);
    }
    if (mask) {
      var lab = el("label", "ae-mask-label"), box2 = el("input", "ae-mask-toggle");
      box2.type = "checkbox"; box2.checked = true;
      box2.addEventListener("change", function () { state.applyMask = box2.checked; draw(); });
      lab.appendChild(box2);
      lab.appendChild(document.createTextNode(" apply the mask (unchecked: the weights before masking)"));
      controls.appendChild(lab);
    }
    var note = el("p", "ae-note");
    ui.appendChild(note);

    // ---- the heatmap: a grid of cells, the query labels left and each row's entropy right ----
    var main = el("div", "ae-main"), grid = el("div", "ae-grid");
    var px = n <= 12 ? 40 : Math.max(6, Math.min(24, Math.floor(480 / n)));
    var showKeys = px >= 14, showNumbers = px >= 40;
    var big = px < 12;  // past 40 keys, a canvas: thousands of cells cost more to style and lay out than all the rest
    // 256 palette colours, as classes for the cells of a small map and as fill styles for a big one
    var rules = [], fills = [];
    for (var q = 0; q < 256; q++) {
      fills.push(colour(d.palette, q / 255));
      rules.push("#" + d.uid + " .ae-c" + q + "{background:" + fills[q] + "}");
    }
    ui.appendChild(el("style", null, rules.join("\n")));
    var classes = new Array(m * n), cells = [], canvas = null, pen = null, hatch = null;
    if (big) grid.style.gap = "0";
    grid.style.gridAutoRows = (px >= 14 ? px : Math.max(px, 6)) + "px";
    grid.tabIndex = 0;
    grid.setAttribute("role", "grid");
    grid.setAttribute("aria-label", "attention weights; arrow keys choose the query");
    var parts = [];
    if (big) {  // a column of row markers beside the canvas; no key or entropy labels (no room)
      grid.style.gridTemplateColumns = "max-content " + (n * px) + "px";
      for (var i = 0; i < m; i++) parts.push('<span class="ae-query" data-i="' + i + '" title="' + esc(d.queries[i]) + '"></span>');
      grid.innerHTML = parts.join("");
      var ratio = window.devicePixelRatio || 1;
      canvas = el("canvas", "ae-canvas");
      canvas.width = Math.round(n * px * ratio); canvas.height = Math.round(m * px * ratio);
      canvas.style.width = n * px + "px"; canvas.style.height = m * px + "px";
      canvas.style.gridColumn = "2"; canvas.style.gridRow = "1 / span " + m;
      canvas.setAttribute("aria-hidden", "true");  // the bars and the sentence below say what it shows
      grid.appendChild(canvas);
      pen = canvas.getContext("2d");
      pen.scale(ratio, ratio);
      var tile = el("canvas"), t = tile.getContext("2d");  // the small map's hatching: grey stripes on white
      tile.width = tile.height = 5;
      t.fillStyle = "#fff"; t.fillRect(0, 0, 5, 5);
      t.strokeStyle = "#ddd"; t.lineWidth = 2; t.beginPath(); t.moveTo(0, 5); t.lineTo(5, 0); t.stroke();
      hatch = pen.createPattern(tile, "repeat");
      canvas.addEventListener("mousemove", function (ev) {
        var i = Math.min(m - 1, Math.floor(ev.offsetY / px)), j = Math.min(n - 1, Math.floor(ev.offsetX / px));
        canvas.title = d.queries[i] + " \u2192 " + d.keys[j];
        if (i !== state.row) { state.row = i; drawRow(current); }
      });
    } else {  // the grid as one string, parsed once (4096 createElement calls cost more than the rest)
      grid.style.gridTemplateColumns = "max-content repeat(" + n + ", " + px + "px) max-content";
      parts.push('<span class="ae-corner"></span>');
      for (var j = 0; j < n; j++) parts.push('<span class="ae-key" title="' + esc(d.keys[j]) + '">' + (showKeys ? esc(d.keys[j]) : "") + "</span>");
      parts.push('<span class="ae-corner">H (nats)</span>');
      for (var i = 0; i < m; i++) {
        parts.push('<span class="ae-query" title="' + esc(d.queries[i]) + '">' + esc(d.queries[i]) + "</span>");
        for (j = 0; j < n; j++) parts.push('<span class="ae-cell" data-i="' + i + '" data-j="' + j + '"></span>');
        parts.push('<span class="ae-entropy"></span>');
      }
      grid.innerHTML = parts.join("");
      grid.style.gridTemplateRows = showKeys ? "max-content" : "0px";
      cells = grid.querySelectorAll(".ae-cell");
    }
    var rowLabels = grid.querySelectorAll(".ae-query"), entropies = grid.querySelectorAll(".ae-entropy");
    grid.addEventListener("mouseover", function (ev) {  // the cell's name as a tooltip, made when pointed at
      var t = ev.target;
      if (t.classList.contains("ae-cell") && !t.title) t.title = d.queries[+t.dataset.i] + " \u2192 " + d.keys[+t.dataset.j];
    });
    grid.addEventListener("mouseover", function (ev) {
      var i = ev.target.getAttribute && ev.target.getAttribute("data-i");
      if (i !== null && i !== undefined && +i !== state.row) { state.row = +i; drawRow(current); }
    });
    grid.addEventListener("keydown", function (ev) {
      var step = {ArrowDown: 1, ArrowUp: -1, PageDown: 5, PageUp: -5}[ev.key];
      if (!step) return;
      ev.preventDefault();
      state.row = Math.min(m - 1, Math.max(0, state.row + step));
      drawRow(current);
    });
    var bars = el("div", "ae-bars");
    main.appendChild(grid); main.appendChild(bars);
    ui.appendChild(main);
    var text = el("p", "ae-text");
    text.setAttribute("aria-live", "polite");
    ui.appendChild(text);
    var barRows = [];
    for (j = 0; j < n; j++) {
      var r = el("div", "ae-bar-row"), fill = el("span", "ae-bar-fill"), track = el("span", "ae-bar");
      track.appendChild(fill);
      r.appendChild(el("span", "ae-bar-key", d.keys[j])); r.appendChild(track);
      r.appendChild(el("span", "ae-bar-value"));
      barRows.push(r); bars.appendChild(r);
    }

    var current = null;
    function masked(i, j) {  // in the average, a pair every head masks
      if (!mask) return false;
      if (state.head >= 0) return !allowed(state.layer * H + state.head, i, j);
      for (var h = 0; h < H; h++) if (allowed(state.layer * H + h, i, j)) return false;
      return true;
    }
    function hidden(i, j) { return state.applyMask && masked(i, j); }

    function drawRow(w) {
      var i = state.row, words = [];
      rowLabels.forEach(function (lab, k) { lab.classList.toggle("ae-selected", k === i); });
      for (var j = 0; j < n; j++) {
        var v = w[i * n + j], r = barRows[j];
        r.children[1].firstChild.style.width = (100 * v) + "%";
        r.children[2].textContent = hidden(i, j) ? "masked" : v.toFixed(3);
        words.push(iso(d.keys[j]) + " " + (hidden(i, j) ? "masked" : v.toFixed(3)));
      }
      var view = state.head >= 0 ? (H > 1 ? ", head " + (state.head + 1) : "") : ", average of " + H + " heads";
      text.textContent = "Query \u201c" + iso(d.queries[i]) + "\u201d (row " + (i + 1) + " of " + m + (L > 1 ? ", layer " + (state.layer + 1) : "") +
        view + ") attends: " + words.join(", ") + "; entropy " + entropy(w.subarray(i * n, i * n + n)).toFixed(3) + " nats.";
    }

    function averageNote() {
      var ws = [], hs = [], avg = viewWeights(), gap = 0, where = "";
      for (var h = 0; h < H; h++) ws.push(headWeights(state.layer, h));
      function meanH(w) { var s = 0; for (var i = 0; i < m; i++) s += entropy(w.subarray(i * n, i * n + n)); return s / m; }
      ws.forEach(function (w, h) {
        hs.push(meanH(w));
        for (var k = 0; k < size; k++) if (Math.abs(w[k] - avg[k]) > gap) {
          gap = Math.abs(w[k] - avg[k]); where = "head " + (h + 1) + ", " + iso(d.queries[Math.floor(k / n)]) + " \u2192 " + iso(d.keys[k % n]);
        }
      });
      return "The average of " + H + " heads hides what each head does: the heads' mean row entropies run from " +
        Math.min.apply(null, hs).toFixed(2) + " to " + Math.max.apply(null, hs).toFixed(2) + " nats, the average's is " +
        meanH(avg).toFixed(2) + "; one head's weight differs from the average by up to " + gap.toFixed(3) + " (" + where + ").";
    }

    function paint(w, top) {  // the big map: a square per weight; masked hatched, once-masked outlined, as the cells
      pen.clearRect(0, 0, n * px, m * px);
      pen.setLineDash([2, 1]); pen.lineWidth = 1; pen.strokeStyle = "#d62728";
      for (var i = 0; i < m; i++) {
        for (var j = 0; j < n; j++) {
          var hide = hidden(i, j);
          pen.fillStyle = hide ? hatch : fills[top > 0 ? Math.round(255 * w[i * n + j] / top) : 0];
          pen.fillRect(j * px, i * px, px, px);
          if (!hide && masked(i, j)) pen.strokeRect(j * px + 0.5, i * px + 0.5, px - 1, px - 1);
        }
      }
    }

    function draw() {
      var w = viewWeights(), top = 0, k;
      current = w;
      for (k = 0; k < size; k++) top = Math.max(top, w[k]);
      if (big) paint(w, top);
      else for (var i = 0; i < m; i++) {
        for (var j = 0; j < n; j++) {
          var c = cells[i * n + j], v = w[i * n + j], hide = hidden(i, j);
          var cls = "ae-cell " + (hide ? "ae-masked" : "ae-c" + (top > 0 ? Math.round(255 * v / top) : 0)) +
            (!hide && masked(i, j) ? " ae-was-masked" : "");
          if (classes[i * n + j] !== cls) { c.className = cls; classes[i * n + j] = cls; }
          if (showNumbers) {
            c.style.color = v / (top || 1) > 0.6 ? "#000" : "#fff";
            c.textContent = hide ? "" : v.toFixed(2);
          }
        }
        entropies[i].textContent = entropy(w.subarray(i * n, i * n + n)).toFixed(2);
      }
      var notes = [];
      if (state.head < 0) notes.push(averageNote());
      if (scores) {
        var s = state.scale !== null ? state.scale : (mask && !state.applyMask ? sliderScale() : null);
        scaleText.textContent = s === null ? " showing the weights as given" :
          " softmax(" + s.toFixed(3) + " \u00d7 scores), temperature " + (1 / s).toFixed(3);
      }
      if (mask && !state.applyMask) notes.push(scores ? "Before masking: the outlined cells are the masked pairs, with the weight the softmax gave them."
        : "The outlined cells are masked (the scores are needed to show the weights before masking).");
      notes.push("Colour: 0 (dark) to " + top.toFixed(3) + " (yellow). Point at a row, or focus the map and use the arrow keys.");
      note.textContent = notes.join(" ");
      drawRow(w);
    }

    var stat = root.querySelector(".ae-static");
    if (stat) stat.style.display = "none";
    draw();  // before the explorer joins the page: one layout, not one per cell
    root.appendChild(ui);
  }

  var me = document.currentScript;
  if (me && me.closest) init(me.closest(".ae-explorer"));
  var all = document.querySelectorAll(".ae-explorer:not([data-ae-ready])");
  for (var k = 0; k < all.length; k++) init(all[k]);
})();
