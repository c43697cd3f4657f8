/** The look every server-rendered page of the cloud shares. No scripts, every value escaped. */

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => entities[char] ?? char)
}

export const styles = `
:root{color-scheme:light dark;--fg:#1c2330;--muted:#5b6473;--bg:#f4f6f9;--card:#fff;--line:#d5dae2;--accent:#2f6fde;--link:#1f5bc4;--danger:#b42318;--danger-bg:#fdecea;--ok:#17663a;--ok-bg:#e6f4ea}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#9aa3b2;--bg:#12161d;--card:#1b212b;--line:#2e3644;--accent:#6b9bff;--link:#8fb3ff;--danger:#ff8a80;--danger-bg:#3a1c1c;--ok:#7ddc9a;--ok-bg:#173323}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{width:min(24rem,calc(100vw - 2rem));background:var(--card);border:1px solid var(--line);border-radius:12px;padding:2rem}
h1{font-size:1.35rem;margin:0 0 .25rem}p{margin:.25rem 0 1rem;color:var(--muted)}
label{display:block;font-weight:600;font-size:.9rem;margin:1rem 0 .35rem}
input{width:100%;padding:.6rem .7rem;border:1px solid var(--line);border-radius:8px;background:transparent;color:inherit;font:inherit}
input:focus{outline:2px solid var(--accent);outline-offset:1px}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;padding:.65rem;border-radius:8px;border:1px solid var(--line);background:transparent;color:inherit;font:inherit;font-weight:600;cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
@media (prefers-color-scheme:dark){button.primary{color:#0b1220}}
.alert{background:var(--danger-bg);color:var(--danger);border-radius:8px;padding:.6rem .8rem;margin:1rem 0 0;font-size:.95rem}
.notice{background:var(--ok-bg);color:var(--ok);border-radius:8px;padding:.6rem .8rem;margin:1rem 0 0;font-size:.95rem}
.alert form .actions,.notice form .actions{margin-top:.6rem}
.client{font-weight:600;color:var(--fg)}
a{color:var(--link);text-underline-offset:2px}
.hint{font-size:.85rem;margin:.35rem 0 0}
.links{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.5rem 1rem;margin-top:1.25rem;font-size:.95rem}
`

/**
 * A whole page: `body` is trusted markup, built by the caller with every value escaped. A page of its
 * own kind adds `extraStyles` to the shared look, and a `wide` card for longer content.
 */
export function page(title: string, body: string, { extraStyles = '', wide = false } = {}): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="same-origin"><title>${escapeHtml(title)} · Relay Cloud</title><style>${styles}${extraStyles}</style></head>
<body><main${wide ? ' class="wide"' : ''}>${body}</main></body></html>`
}

/** The email and password fields of a sign-in form; the first empty one has the focus. */
export function credentialFields(email: string): string {
  return `<label for="email">Email</label>
<input id="email" name="email" type="email" required maxlength="255" autocomplete="username" value="${escapeHtml(email)}" ${email ? '' : 'autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="256" autocomplete="current-password" ${email ? 'autofocus' : ''}>`
}

/** A page with a heading and one paragraph, for outcomes and refusals. */
export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`)
}
