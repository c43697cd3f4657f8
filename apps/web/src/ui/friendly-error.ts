/**
 * A sentence for the network errors a source meets most ("connect ECONNREFUSED 127.0.0.1:5999"
 * becomes "Nothing is listening at 127.0.0.1:5999. Is the service running?"). The raw text stays
 * beside it as `detail`, for searching and for support; text no rule knows is shown as it is.
 */
export type FriendlyError = {
  sentence: string
  /** The original text, when the sentence replaces it. */
  detail?: string
}

type Rule = { pattern: RegExp; say: (match: RegExpExecArray, where: string) => string }

/** Checked in order: the first match wins, so the more specific causes come first. */
const rules: readonly Rule[] = [
  {
    pattern: /CERT_HAS_EXPIRED|certificate has expired/i,
    say: (_, where) => `The certificate of ${where} has expired, so the connection is not trusted.`,
  },
  {
    pattern: /SELF_SIGNED_CERT|self[- ]signed certificate/i,
    say: (_, where) =>
      `${capitalised(where)} uses a self-signed certificate, which this relay does not trust. Use a certificate from a trusted authority.`,
  },
  {
    pattern: /ERR_TLS_CERT_ALTNAME_INVALID|altnames|does not match certificate/i,
    say: (_, where) => `The certificate of ${where} is made out to another name than the one in the address.`,
  },
  {
    pattern: /UNABLE_TO_(?:VERIFY|GET_ISSUER)|certificate/i,
    say: (_, where) => `The certificate of ${where} could not be verified, so the connection is not trusted.`,
  },
  {
    pattern: /ECONNREFUSED(?: (\S+[^\s;,.)]))?/,
    say: (match, where) => `Nothing is listening at ${match[1] ?? where}. Is the service running?`,
  },
  {
    pattern: /ENOTFOUND(?: (\S+[^\s;,.)]))?/,
    say: (match, where) =>
      `The name ${match[1] ?? where} could not be found. Check the address for typos, and that this machine's DNS works.`,
  },
  {
    pattern: /EAI_AGAIN(?: (\S+[^\s;,.)]))?/,
    say: (match, where) =>
      `The name ${match[1] ?? where} could not be looked up just now. Check this machine's network and DNS.`,
  },
  {
    pattern: /E(?:HOST|NET)UNREACH(?: (\S+[^\s;,.)]))?/,
    say: (match, where) =>
      `${capitalised(match[1] ?? where)} cannot be reached from this machine. Check the address, and that this machine is on that network.`,
  },
  {
    pattern: /ETIMEDOUT(?: (\S+[^\s;,.)]))?|UND_ERR_CONNECT_TIMEOUT|TimeoutError|timed? ?out/i,
    say: (match, where) =>
      `${capitalised(match[1] ?? where)} did not answer in time. Check the address, and that no firewall is in the way.`,
  },
  {
    pattern: /ECONNRESET|socket hang up/i,
    say: (_, where) =>
      `${capitalised(where)} closed the connection before answering. It may have restarted, or it speaks another protocol on that port.`,
  },
  {
    pattern: /ERR_SOCKET_BAD_PORT|Port should be|invalid port|port .*out of range/i,
    say: () => 'The port in the address is not valid: it must be a number from 1 to 65535.',
  },
  {
    pattern: /\bHTTP 401\b|status(?: code)? 401\b/i,
    say: (_, where) => `${capitalised(where)} asks for credentials (HTTP 401). Check the access token.`,
  },
  {
    pattern: /\bHTTP 403\b|status(?: code)? 403\b/i,
    say: (_, where) => `${capitalised(where)} refused access (HTTP 403). Check that the token is allowed to read this.`,
  },
  {
    pattern: /\bHTTP 404\b|status(?: code)? 404\b/i,
    say: (_, where) => `Nothing was found at ${where} (HTTP 404). Check the path in the address.`,
  },
  {
    pattern: /\bHTTP (5\d\d)\b|status(?: code)? (5\d\d)\b/i,
    say: (match, where) =>
      `${capitalised(where)} failed with an error of its own (HTTP ${match[1] ?? match[2]}). Try again later, or check that service's logs.`,
  },
  {
    pattern: /fetch failed/i,
    say: (_, where) => `The request to ${where} failed before any answer came. Check the address and the network.`,
  },
]

export function explainError(raw: string): FriendlyError {
  for (const rule of rules) {
    const match = rule.pattern.exec(raw)
    if (match) {
      return { sentence: rule.say(match, whereOf(raw)), detail: raw }
    }
  }
  return { sentence: raw }
}

/** The address the error names ("http://host:80/path", "host:port"), or else "the server". */
function whereOf(raw: string): string {
  const url = /\b(?:https?|mqtts?|wss?):\/\/[^\s:;,)]+(?::\d+)?(?:\/[^\s;,)]*[^\s;,.):])?/i.exec(raw)
  return url ? url[0] : 'the server'
}

function capitalised(text: string): string {
  return text.startsWith('the ') ? `The ${text.slice(4)}` : text
}
