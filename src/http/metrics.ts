/**
 * What /metrics shows (Prometheus text format, prom-client), in a registry of its own per app:
 * requests by route and status and their latency, each search's work, the snapshot served (read
 * at each scrape: a swap changes it), credits spent by plan, the PDF renderer's work, and the process's CPU time and memory.
 *
 * Routes are labelled by their template (/v1/page/{page_id}), never the raw path, so that the
 * number of series stays bounded whatever clients ask for; paths no route serves share one label.
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { Gate } from "../access";
import type { PdfRenderService, PdfStats } from "../pdf";
import type { SearchWork } from "../search";
import type { SnapshotMeta } from "../snapshot";
import { routedPath } from "./pipeline";

/** The route label of a path no route serves. */
const UNMATCHED = "unmatched";

/** Seconds: a chunk is answered in well under a millisecond, a PDF may wait in its queue for minutes. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 180];
/** Per query: from a rare word's few chunks to a common prefix's millions of postings. */
const WORK_BUCKETS = [10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/** What the pool has done since it started (the server's /metrics, the tests). */
export interface SearchPoolStats {
  workers: number;
  /** Requests in the pool now: waiting for a worker (D106) or sent to one and not yet answered. */
  pending: number;
  /** Tasks the workers answered (a route's answer, a tool's, or an error). */
  answered: number;
  /** Of those, tasks on a snapshot a worker could not open (answered on the request thread instead). */
  missing: number;
  /** Refused with 503 because the pool was full (D104, D106). */
  refusals: number;
  /** Refused with 429 because the request's key held half of the pool's room (D105). */
  keyRefusals: number;
  /** Workers that died and were replaced. */
  replaced: number;
  /** Generations open now. */
  generations: number;
  /** Workers' opens that checked the file's structure again (D119): one the request thread had not checked as it is now. */
  checkedAgain: number;
}

export interface MetricsSources {
  /** The snapshot served now (it changes when a newer one is swapped in). */
  snapshot: () => SnapshotMeta;
  /** Calls the watcher with each search's work, whichever snapshot it ran on, until the function returned is called. */
  watch: (watcher: (work: SearchWork) => void) => () => void;
  /** Snapshots swapped out that still answer requests in flight. */
  retiring: () => number;
  access: Gate | undefined;
  pdf: PdfRenderService;
  /** The search pool's counts (D101, D104), when the server has one. */
  pool?: () => SearchPoolStats;
  /** The routes' path templates, as the router has them (/v1/page/:page_id). */
  routes: readonly string[];
}

/** Matches a path to its route's template, without allocating for the usual paths. */
class RouteLabels {
  private readonly exact = new Map<string, string>();
  private readonly patterns: { pattern: RegExp; label: string }[] = [];

  constructor(templates: readonly string[]) {
    for (const template of new Set(templates)) {
      if (!template.includes(":") && !template.includes("*")) {
        this.exact.set(template, template);
        continue;
      }
      const source = template
        .split("/")
        .map((segment) =>
          segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.+?^${}()|[\]\\]/g, "\\$&"),
        )
        .join("/");
      this.patterns.push({
        pattern: new RegExp(`^${source}/?$`),
        label: template.replace(/:([A-Za-z0-9_]+)/g, "{$1}"),
      });
    }
  }

  of(path: string): string {
    const label = this.exact.get(path);
    if (label !== undefined) return label;
    for (const { pattern, label } of this.patterns) if (pattern.test(path)) return label;
    return this.exact.get(routedPath(path)) ?? UNMATCHED;
  }
}

export class Metrics {
  readonly registry = new Registry();
  private readonly routes: RouteLabels;
  private readonly requests: Counter<"route" | "status">;
  private readonly latency: Histogram<"route">;
  /** The label objects of each route, and of each route and status: made once, not per request. */
  private readonly routeLabels = new Map<string, { route: string }>();
  private readonly statusLabels = new Map<string, Map<number, { route: string; status: string }>>();
  private readonly unwatch: () => void;

  constructor({ snapshot, watch, retiring, access, pdf, pool, routes }: MetricsSources) {
    const registers = [this.registry];
    this.routes = new RouteLabels([...routes, "/metrics"]);
    this.requests = new Counter({
      name: "tome_http_requests_total",
      help: "HTTP requests answered, by route template and status",
      labelNames: ["route", "status"],
      registers,
    });
    this.latency = new Histogram({
      name: "tome_http_request_duration_seconds",
      help: "Time from a request's arrival to its answer's headers, by route template",
      labelNames: ["route"],
      buckets: LATENCY_BUCKETS,
      registers,
    });

    const candidates = new Histogram({
      name: "tome_search_candidates",
      help: "Documents (chunks and titles) scored per search or lucky lookup",
      buckets: WORK_BUCKETS,
      registers,
    });
    const postings = new Histogram({
      name: "tome_search_postings",
      help: "Index postings read per search or lucky lookup",
      buckets: WORK_BUCKETS,
      registers,
    });
    const timedOut = new Counter({
      name: "tome_search_timed_out_total",
      help: "Searches and lucky lookups that reached their time limit and answered with what they had found (D91)",
      registers,
    });
    this.unwatch = watch((work) => {
      candidates.observe(work.candidates);
      postings.observe(work.postings);
      if (work.cutOff) timedOut.inc();
    });

    // Read at each scrape: a swap changes the snapshot served.
    new Gauge({
      name: "tome_snapshot_info",
      help: "The snapshot served (always 1): its wiki, language, build time (ISO 8601) and content hash",
      labelNames: ["wiki", "lang", "built_at", "content_hash"],
      registers,
      collect() {
        const meta = snapshot();
        this.reset();
        this.set(
          { wiki: meta.wiki.host, lang: meta.wiki.lang, built_at: meta.createdAt, content_hash: meta.contentHash },
          1,
        );
      },
    });
    const gauge = (name: string, help: string, read: (meta: SnapshotMeta) => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read(snapshot()));
        },
      });
    gauge("tome_snapshot_pages", "Pages in the snapshot served", (m) => m.indexedPages);
    gauge("tome_snapshot_chunks", "Chunks in the snapshot served", (m) => m.indexedChunks);
    gauge(
      "tome_snapshot_built_at_seconds",
      "When the snapshot served was built (Unix time)",
      (m) => Date.parse(m.createdAt) / 1000,
    );
    new Gauge({
      name: "tome_snapshots_retiring",
      help: "Snapshots swapped out for a newer one that still answer requests in flight (then freed)",
      registers,
      collect() {
        this.set(retiring());
      },
    });

    if (access) {
      new Counter({
        name: "tome_credits_spent_total",
        help: "Credits spent since the server started, by the plan of the account that spent them",
        labelNames: ["plan"],
        registers,
        collect() {
          this.reset();
          for (const [plan, credits] of access.creditsSpent()) this.inc({ plan }, credits);
        },
      });
      new Counter({
        name: "tome_work_charged_seconds_total",
        help: "Seconds of the server's thread charged to keys' work shares since the server started, by plan",
        labelNames: ["plan"],
        registers,
        collect() {
          this.reset();
          for (const [plan, ms] of access.workCharged()) this.inc({ plan }, ms / 1000);
        },
      });
    }

    const stats = pdf.stats?.bind(pdf);
    if (stats) {
      const counter = (name: string, help: string, read: (s: PdfStats) => number) =>
        readCounter(registers, name, help, () => read(stats()));
      counter("tome_pdf_renders_total", "PDFs rendered", (s) => s.renders);
      counter(
        "tome_pdf_render_failures_total",
        "PDF renders that failed (an error or the time limit)",
        (s) => s.failures,
      );
      counter(
        "tome_pdf_cache_hits_total",
        "PDF requests answered with a kept PDF, without rendering",
        (s) => s.cacheHits,
      );
      counter(
        "tome_pdf_renders_abandoned_total",
        "PDF renders given up under way, their clients gone (D26)",
        (s) => s.abandoned,
      );
      counter(
        "tome_pdf_refused_total",
        "PDF requests refused because the render queue was full (503)",
        (s) => s.refusals,
      );
      new Gauge({
        name: "tome_pdf_queue",
        help: "PDF renders waiting (queued) and under way (rendering)",
        labelNames: ["state"],
        registers,
        collect() {
          const s = stats();
          this.set({ state: "queued" }, s.queued);
          this.set({ state: "rendering" }, s.rendering);
        },
      });
    }

    if (pool) {
      readCounter(
        registers,
        "tome_search_pool_refused_total",
        "Searches refused with 503 because the search pool was full (D104)",
        () => pool().refusals,
      );
      readCounter(
        registers,
        "tome_search_pool_key_refused_total",
        "Searches refused with 429 because their key already held half of the search workers' room (D105)",
        () => pool().keyRefusals,
      );
      readCounter(
        registers,
        "tome_search_pool_replaced_total",
        "Search workers that died or stuck and were replaced, their requests answered 503 (D104)",
        () => pool().replaced,
      );
      new Gauge({
        name: "tome_search_pool_pending",
        help: "Searches waiting or running in the search workers",
        registers,
        collect() {
          this.set(pool().pending);
        },
      });
    }

    processMetrics(registers);
  }

  /** Counts an answered request: its path (without the query; undefined if it could not be read), status and seconds taken. */
  observe(path: string | undefined, status: number, seconds: number): void {
    const route = path === undefined ? UNMATCHED : this.routes.of(path);
    let byStatus = this.statusLabels.get(route);
    if (!byStatus) {
      byStatus = new Map();
      this.statusLabels.set(route, byStatus);
      this.routeLabels.set(route, { route });
    }
    let labels = byStatus.get(status);
    if (!labels) {
      labels = { route, status: String(status) };
      byStatus.set(status, labels);
    }
    this.requests.inc(labels);
    this.latency.observe(this.routeLabels.get(route)!, seconds);
  }

  /** The exposition text. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** Stops watching the engine. */
  close(): void {
    this.unwatch();
  }
}

/**
 * The process's CPU time and memory under the standard process_* names. Not prom-client's
 * default metrics: under Bun their nodejs_* heap figures are V8's shape filled with zeros, and
 * the event loop lag is NaN until it has samples.
 */
/** A counter whose value is read from elsewhere at each scrape (a total kept by its owner). */
function readCounter(registers: Registry[], name: string, help: string, read: () => number): Counter {
  return new Counter({
    name,
    help,
    registers,
    collect() {
      this.reset();
      this.inc(read());
    },
  });
}

function processMetrics(registers: Registry[]): void {
  const seconds = (microseconds: number) => microseconds / 1e6;
  const cpu = (name: string, help: string, read: (usage: NodeJS.CpuUsage) => number) =>
    readCounter(registers, name, help, () => seconds(read(process.cpuUsage())));
  cpu("process_cpu_user_seconds_total", "User CPU time spent, in seconds", (u) => u.user);
  cpu("process_cpu_system_seconds_total", "System CPU time spent, in seconds", (u) => u.system);
  cpu("process_cpu_seconds_total", "User and system CPU time spent, in seconds", (u) => u.user + u.system);
  new Gauge({
    name: "process_start_time_seconds",
    help: "When the process started (Unix time, seconds)",
    registers,
  }).set(Math.round(Date.now() / 1000 - process.uptime()));
  new Gauge({
    name: "process_resident_memory_bytes",
    help: "Resident memory size, in bytes",
    registers,
    collect() {
      this.set(process.memoryUsage.rss());
    },
  });
  new Gauge({
    name: "tome_js_heap_bytes",
    help: "The JavaScript heap: its size (total) and what live objects use of it (used)",
    labelNames: ["state"],
    registers,
    collect() {
      const { heapTotal, heapUsed } = process.memoryUsage();
      this.set({ state: "total" }, heapTotal);
      this.set({ state: "used" }, heapUsed);
    },
  });
}
