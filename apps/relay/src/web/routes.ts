import { existsSync } from 'node:fs'
import path from 'node:path'
import fastifyStatic from '@fastify/static'
import { type HttpServer, type NotFoundHandler, routeNotFound, sendError } from '@relay/server-kit'

export const apiPrefix = '/api'

export function hasWebUi(webDir: string): boolean {
  return existsSync(path.join(webDir, 'index.html'))
}

/** Serves the files of the built web UI. */
export async function serveWebUi(app: HttpServer, webDir: string) {
  if (!hasWebUi(webDir)) {
    app.log.warn({ webDir }, 'web UI not built; run `npm run build` to serve it')
    return
  }
  // The UI's files are public: the sign-in screens are part of it. @fastify/static takes no route
  // config, so the routes it adds while it registers are marked here, and no route after them.
  let registering = true
  app.addHook('onRoute', (route) => {
    if (registering) {
      route.config = { ...route.config, public: true }
    }
  })
  await app.register(fastifyStatic, {
    root: webDir,
    wildcard: true,
    index: 'index.html',
    cacheControl: false,
    setHeaders: (res, file) => {
      // Vite puts a content hash in every asset name, so an asset never changes under one URL.
      const immutable = file.includes(`${path.sep}assets${path.sep}`)
      res.setHeader('cache-control', immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
    },
  })
  registering = false
}

/**
 * Unknown paths outside /api that look like pages get index.html, so the browser router can
 * render them; unknown /api paths and missing files stay 404s.
 */
export function spaFallback(webDir: string): NotFoundHandler {
  return (request, reply) => {
    const pathname = request.url.split('?')[0] ?? '/'
    const isPage = (request.method === 'GET' || request.method === 'HEAD') && !path.extname(pathname)
    if (!isPage || looksLikeApi(pathname)) {
      return routeNotFound(request, reply)
    }
    if (!reply.sendFile) {
      return sendError(reply, 'UNAVAILABLE', 'The web UI is not built; run `npm run build`')
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html', webDir)
  }
}

/** Any spelling of an /api path (encoded, dotted, doubled slashes, other case) is an API path. */
function looksLikeApi(pathname: string): boolean {
  let decoded: string
  try {
    decoded = decodeURIComponent(pathname)
  } catch {
    return true
  }
  const normal = new URL(decoded.replaceAll('\\', '/').replace(/\/{2,}/g, '/'), 'http://relay.invalid').pathname
  return normal.toLowerCase() === apiPrefix || normal.toLowerCase().startsWith(`${apiPrefix}/`)
}
