"use strict";
(function () {
  // skillassay serve --live: polls state.json and redraws; text only (textContent), never HTML
  var POLL_MS = __POLL_MS__;
  var jobs = document.getElementById("jobs");
  var connection = document.getElementById("connection");
  var last = null, board = null, offset = 0, failures = 0;

  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function row(cells, cls) {
    var tr = el("tr", cls);
    cells.forEach(function (c) {
      var td = el("td", c.n ? "n" : "");
      if (c.node) td.appendChild(c.node); else td.textContent = c.t === undefined || c.t === null ? "–" : String(c.t);
      tr.appendChild(td);
    });
    return tr;
  }
  function table(head, rows, cls) {
    var t = el("table", cls), tr = el("tr");
    head.forEach(function (h) { tr.appendChild(el("th", "", h)); });
    t.appendChild(tr);
    rows.forEach(function (r) { t.appendChild(r); });
    return t;
  }
  function secs(s) {
    s = Math.max(0, Math.round(s));
    var m = Math.floor(s / 60), h = Math.floor(m / 60);
    return h ? h + "h " + (m % 60) + "m" : m ? m + "m " + (s % 60) + "s" : s + "s";
  }
  function since(iso) { return (Date.now() + offset - Date.parse(iso)) / 1000; }
  function usd(v) { return v === null || v === undefined ? "–" : "$" + v.toFixed(v < 1 ? 4 : 2); }
  function arm(v) { return v === "baseline" ? "without the skill" : "with the skill"; }
  function badge(text, cls) { return el("span", "badge " + cls, text); }

  function statusBadge(job) {
    if (job.stale) return badge("stale", "warn");
    if (job.status === "running") return badge("running", "running");
    return badge(job.status, job.status === "finished" ? "pass" : "fail");
  }
  function costLine(job) {
    // the money the job's model proxy has metered, against --max-cost
    var line = (job.status === "running" ? "Cost so far " : "Cost ") + usd(job.spent_usd);
    if (job.max_cost !== null && job.max_cost !== undefined) {
      line += " of --max-cost " + usd(job.max_cost) + " (" + Math.round(100 * job.spent_usd / job.max_cost) + "%)";
    }
    if (job.not_started) line += "; " + job.not_started + " run(s) not started: --max-cost spent";
    return line;
  }
  function verdict(run) {
    if (run.passed === null || run.passed === undefined) return badge(run.outcome, "warn");
    return badge(run.passed ? "pass" : "fail", run.passed ? "pass" : "fail");
  }
  function drawJob(job) {
    var s = el("section", "job");
    s.id = "job-" + job.job_id;
    var h = el("h2", "", "Job " + job.job_id + " ");
    h.appendChild(statusBadge(job));
    s.appendChild(h);
    var ended = job.status !== "running";
    var took = ended && job.ended_at ? (Date.parse(job.ended_at) - Date.parse(job.started_at)) / 1000 : since(job.started_at);
    s.appendChild(el("p", "summary", job.done + " of " + job.planned + " runs done · " +
      (ended ? "ran " : "running for ") + secs(took) + " · " + job.executor + " executor on " + job.host));
    s.appendChild(el("p", "cost", costLine(job)));
    if (job.stale) s.appendChild(el("p", "note", "Not running any more: " + job.stale + ". `skillassay run --resume " + job.job_id + "` finishes it."));
    if (job.lanes.length && !job.stale) {
      s.appendChild(el("h3", "", "Under way"));
      s.appendChild(table(["Eval", "Arm", "Run", "Phase", "In phase", "Elapsed"], job.lanes.map(function (l) {
        return row([{ t: l.eval_id }, { t: arm(l.variant) }, { t: l.run_index, n: true }, { t: l.phase },
          { t: secs(since(l.phase_at)), n: true }, { t: secs(since(l.started_at)), n: true }], "lane");
      }), "lanes"));
    }
    if (job.finished.length) {
      s.appendChild(el("h3", "", "Finished (newest first)"));
      s.appendChild(table(["Eval", "Arm", "Run", "Verdict", "Score", "Cost", "Took"], job.finished.map(function (r) {
        return row([{ t: r.eval_id }, { t: arm(r.variant) }, { t: r.run_index, n: true }, { node: verdict(r) },
          { t: r.score === null ? null : (100 * r.score).toFixed(1) + "%", n: true }, { t: usd(r.cost_usd), n: true },
          { t: r.seconds === null ? null : secs(r.seconds), n: true }], "finished-run");
      }), "finished"));
    }
    return s;
  }
  function draw() {
    if (!board) return;
    var parts = board.jobs.map(drawJob);
    if (!parts.length) parts = [el("p", "muted", "No job has run here with a live view yet (`skillassay run` writes one).")];
    jobs.replaceChildren.apply(jobs, parts);
  }
  function poll() {
    fetch("state.json", { cache: "no-cache" }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      var now = Number(r.headers.get("X-Skillassay-Now"));
      return r.text().then(function (text) {
        if (text !== last) {  // a new document (an unchanged one comes from the cache, after a 304)
          last = text;
          board = JSON.parse(text);
          if (now) offset = now - Date.now();
        }
      });
    }).then(function () {
      failures = 0;
      connection.textContent = "Updated " + new Date().toLocaleTimeString();
    }, function (e) {
      failures += 1;
      connection.textContent = "Cannot reach skillassay serve (" + e.message + "); trying again.";
    }).then(function () {
      draw();
      setTimeout(poll, POLL_MS * Math.min(Math.pow(2, failures), 16));
    });
  }
  poll();
})();
