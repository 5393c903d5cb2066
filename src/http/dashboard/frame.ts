/**
 * The frame of every dashboard page (written whole by the server: no script is needed to use
 * them), and the pages with nothing else in them: signing in, and a message (a refusal, an
 * error). Every form carries a CSRF token (D70).
 */
import { html, type Html } from "./html";

export const ASSETS = { css: "/dashboard/dashboard.css", js: "/dashboard/dashboard.js", icon: "/dashboard/icon.svg" };

interface Frame {
  title: string;
  /** Shown in the top bar with a sign-out button when signed in. */
  who?: { label: string; csrf: string };
  body: Html;
}

export function page(f: Frame): string {
  return `<!doctype html>${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<link rel="icon" href="${ASSETS.icon}" type="image/svg+xml">
<title>${f.title} · Tome dashboard</title>
<link rel="stylesheet" href="${ASSETS.css}">
<script src="${ASSETS.js}" defer></script>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header class="top">
  <a class="brand" href="/dashboard"><span class="mark" aria-hidden="true">T</span> Tome <span class="brand-sub">dashboard</span></a>
  ${
    f.who &&
    html`<div class="who"><span class="who-label">${f.who.label}</span>
  <form method="post" action="/dashboard/sign-out">${csrfField(f.who.csrf)}<button class="button quiet" type="submit">Sign out</button></form></div>`
  }
</header>
<main id="main" tabindex="-1">
${f.body}
</main>
<footer class="foot">Tome · encyclopedia text retrieval API</footer>
</body>
</html>`}`;
}

export const number = (n: number) => (Number.isFinite(n) ? n.toLocaleString("en-US") : "Unlimited");

/**
 * A secret shown once (a new key, a sign-in token), in a field to select or copy: a textarea,
 * so that on a narrow screen the text wraps inside it rather than running out of it.
 */
export const secretField = (secret: string, label: string) =>
  html`<div class="secret"><textarea id="new-key" class="secret-text" readonly rows="2" aria-label="${label}" spellcheck="false">${secret}</textarea>
<button class="button primary" type="button" data-copy="new-key" hidden>Copy</button></div>`;

export const csrfField = (csrf: string) => html`<input type="hidden" name="csrf" value="${csrf}">`;

export function alert(kind: "error" | "notice", text: string | Html | undefined): Html | undefined {
  if (!text) return undefined;
  return kind === "error"
    ? html`<div class="alert error" role="alert">${text}</div>`
    : html`<div class="alert notice" role="status">${text}</div>`;
}

/** The sign-in form; `notice` says what just happened (signed out). */
export function signInPage(o: { csrf: string; error?: string; notice?: string }): string {
  return page({
    title: "Sign in",
    body: html`<section class="card narrow">
<h1>Sign in</h1>
<p class="lead">Use the dashboard sign-in token your Tome operator gave you (it starts with <code>wd_</code>). API keys do not sign in here.</p>
${alert("notice", o.notice)}${alert("error", o.error)}
<form method="post" action="/dashboard/sign-in" class="stack">
${csrfField(o.csrf)}
<label for="token">Sign-in token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required spellcheck="false" ${o.error ? html`aria-invalid="true" autofocus` : html`autofocus`}>
<button class="button primary" type="submit">Sign in</button>
</form>
</section>`,
  });
}

export function messagePage(o: {
  title: string;
  message: string;
  back?: { href: string; label: string };
  who?: Frame["who"];
}): string {
  return page({
    title: o.title,
    who: o.who,
    body: html`<section class="card narrow"><h1>${o.title}</h1><p>${o.message}</p>${o.back ? html`<p><a class="button primary" href="${o.back.href}">${o.back.label}</a></p>` : ""}</section>`,
  });
}
