// Serves the web UI (issue 6) at /ui on the Operator API listener: the single-page app built by
// `make build` (scripts/build-extra.sh, vite) into dist/ui-app. Hashed assets are cached for good;
// index.html is never cached and answers every other path under /ui, so a client route such as
// /ui/incarnations/web survives a reload. The page reaches only this origin (CSP), and the operator's
// token lives in the page's session storage, never in a URL this router sees.
import path from 'node:path';
import express, { type NextFunction, type Request, type Response } from 'express';
import { problemErrorHandler } from '../../api';
import { sendFileEncoded } from '../../api/compressed';
import { problems } from '../../api/problems';
import { silentLogger, type Logger } from '../../common/logger';

/** dist/ui-app, beside this file's compiled form in dist/ui/server. */
export const DEFAULT_UI_DIR = path.resolve(__dirname, '..', '..', 'ui-app');

const CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  next();
}

export function createUiRouter(opts: { dir?: string; log?: Logger } = {}): express.Router {
  const dir = opts.dir ?? DEFAULT_UI_DIR;
  const index = path.join(dir, 'index.html');
  const router = express.Router();
  router.use(securityHeaders);
  const assets = path.join(dir, 'assets');
  router.get('/assets/{*rest}', (req: Request, res: Response, next: NextFunction) => {
    // Canonical before any check: the resolved path must stay inside the assets folder.
    const file = path.resolve(assets, `.${path.posix.normalize(`/${req.path.slice('/assets/'.length)}`)}`);
    res.type(path.extname(file) || 'application/octet-stream');
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    if (!file.startsWith(assets + path.sep) || !sendFileEncoded(req, res, file)) {
      res.removeHeader('Cache-Control');
      next(problems.notFound(`asset ${req.path}`));
    }
  });
  router.get('/{*rest}', (req: Request, res: Response, next: NextFunction) => {
    // Read per request when changed (a stat): a rebuild while the keeper runs is picked up without a restart.
    res.setHeader('Cache-Control', 'no-store');
    res.type('html');
    if (!sendFileEncoded(req, res, index)) {
      res.removeHeader('Cache-Control');
      next(problems.unavailable('the web UI build (run `make build`)'));
    }
  });
  // Errors raised in a mounted router never reach the error handlers of routers mounted after it,
  // so this one answers its own as problems (a missing asset 404, an unbuilt UI 503).
  router.use(problemErrorHandler(opts.log ?? silentLogger));
  return router;
}
