/** The cloud's few server-rendered pages: sign-in and OAuth errors. No scripts, every value escaped. */

const entities: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (char) => entities[char] ?? char)
}

const styles = `
:root{color-scheme:light dark;--fg:#1c2330;--muted:#5b6473;--bg:#f4f6f9;--card:#fff;--line:#d5dae2;--accent:#2f6fde;--danger:#b42318;--danger-bg:#fdecea}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ef;--muted:#9aa3b2;--bg:#12161d;--card:#1b212b;--line:#2e3644;--accent:#6b9bff;--danger:#ff8a80;--danger-bg:#3a1c1c}}
*{box-sizing:border-box}body{margin:0;min-height:100vh;display:grid;place-items:center;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{width:min(24rem,calc(100vw - 2rem));background:var(--card);border:1px solid var(--line);border-radius:12px;padding:2rem}
h1{font-size:1.35rem;margin:0 0 .25rem}p{margin:.25rem 0 1rem;color:var(--muted)}
label{display:block;font-weight:600;font-size:.9rem;margin:1rem 0 .35rem}
input{width:100%;padding:.6rem .7rem;border:1px solid var(--line);border-radius:8px;background:transparent;color:inherit;font:inherit}
input:focus{outline:2px solid var(--accent);outline-offset:1px}
.actions{display:flex;gap:.75rem;margin-top:1.5rem}
button{flex:1;padding:.65rem;border-radius:8px;border:1px solid var(--line);background:transparent;color:inherit;font:inherit;font-weight:600;cursor:pointer}
button.primary{background:var(--accent);border-color:var(--accent);color:#fff}
.alert{background:var(--danger-bg);color:var(--danger);border-radius:8px;padding:.6rem .8rem;margin:1rem 0 0;font-size:.95rem}
.client{font-weight:600;color:var(--fg)}
`

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="referrer" content="no-referrer"><title>${escapeHtml(title)} · Relay Cloud</title><style>${styles}</style></head>
<body><main>${body}</main></body></html>`
}

export type SignInView = { uid: string; clientName: string; email?: string; error?: string }

export function signInPage({ uid, clientName, email = '', error }: SignInView): string {
  const action = `/interaction/${encodeURIComponent(uid)}`
  return page(
    'Sign in',
    `<h1>Sign in to Relay Cloud</h1>
<p><span class="client">${escapeHtml(clientName)}</span> wants to use your cloud account for backups.</p>
${error ? `<div class="alert" role="alert">${escapeHtml(error)}</div>` : ''}
<form method="post" action="${action}/login" autocomplete="on">
<label for="email">Email</label>
<input id="email" name="email" type="email" required maxlength="255" autocomplete="username" value="${escapeHtml(email)}" ${email ? '' : 'autofocus'}>
<label for="password">Password</label>
<input id="password" name="password" type="password" required maxlength="256" autocomplete="current-password" ${email ? 'autofocus' : ''}>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>
<form method="post" action="${action}/abort"><div class="actions"><button type="submit">Cancel</button></div></form>`,
  )
}

export function messagePage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>`)
}
