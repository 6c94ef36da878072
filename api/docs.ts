// /docs: the spec viewer (interface spec 4.1). A maintained viewer, Scalar's API reference, served
// from the package's own browser bundle on this keeper (no CDN: keepers often have no internet).
// The page reads /openapi.json; the document declares a bearer scheme, so the viewer shows a token
// field where the operator pastes a JWT, and Try It sends it. The token stays in the page: nothing
// here persists it, and the CSP lets the page talk to this keeper only.
import path from 'node:path';
import type { Router } from 'express';
import { sendEncoded, sendFileEncoded } from './compressed';

function scalarBundle(): string {
  // The package's exports map hides dist/browser; its main entry sits in dist/, next to it.
  return path.join(path.dirname(require.resolve('@scalar/api-reference')), 'browser', 'standalone.js');
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Keeper Operator API</title>
</head>
<body>
  <div id="app"></div>
  <script src="/docs/scalar.js"></script>
  <script src="/docs/init.js"></script>
</body>
</html>
`;

// External fetches (fonts, telemetry, the AI agent, a CORS proxy) are all switched off: the viewer
// must work on an isolated network and must never send a pasted token anywhere but here.
const INIT = `Scalar.createApiReference('#app', ${JSON.stringify({
  url: '/openapi.json',
  withDefaultFonts: false,
  telemetry: false,
  persistAuth: false,
  agent: { disabled: true },
  hideClientButton: false,
  showDeveloperTools: 'never',
  documentDownloadType: 'json',
  authentication: { preferredSecurityScheme: 'bearerAuth' },
})});
`;

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

export function mountDocs(router: Router, openApiDocument: object): void {
  const json = Buffer.from(JSON.stringify(openApiDocument));
  router.get('/openapi.json', (req, res) => {
    res.type('application/json').set('Cache-Control', 'no-cache');
    sendEncoded(req, res, 'openapi.json', { mtimeMs: 0, size: json.length, raw: json });
  });
  router.get('/docs', (_req, res) => {
    res
      .type('html')
      .set({ 'Content-Security-Policy': CSP, 'Cache-Control': 'no-cache', 'X-Frame-Options': 'DENY' })
      .send(PAGE);
  });
  router.get('/docs/init.js', (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(INIT);
  });
  const bundle = scalarBundle();
  router.get('/docs/scalar.js', (req, res, next) => {
    res.type('application/javascript').set('Cache-Control', 'public, max-age=3600');
    if (!sendFileEncoded(req, res, bundle)) next(new Error(`the API reference bundle is missing: ${bundle}`));
  });
}
