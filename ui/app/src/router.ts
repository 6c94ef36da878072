// A small history-API router for the paths under /ui. The keeper answers every /ui/* path with the
// app, so any route can be reloaded or bookmarked.
import { useEffect, useState } from 'preact/hooks';

const EVENT = 'keeper:navigate';

export function navigate(path: string, opts: { replace?: boolean } = {}): void {
  if (path === location.pathname) return void window.dispatchEvent(new Event(EVENT));
  if (opts.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.dispatchEvent(new Event(EVENT));
}

/** The current path; re-renders the caller on navigation and on the browser's back/forward. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const update = () => setPath(location.pathname);
    window.addEventListener(EVENT, update);
    window.addEventListener('popstate', update);
    update(); // a navigation between the first render and this effect would otherwise be missed
    return () => {
      window.removeEventListener(EVENT, update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return path;
}

export type Route =
  | { view: 'signin' }
  | { view: 'overview' }
  | { view: 'souls' }
  | { view: 'services' }
  | { view: 'incarnations' }
  | { view: 'activity' }
  | { view: 'archons' }
  | { view: 'incarnation'; name: string }
  | { view: 'incarnation-plan'; name: string; planId: string }
  | { view: 'incarnation-run'; name: string; applyId: string }
  | { view: 'executions' }
  | { view: 'execution'; id: string }
  | { view: 'not-found' };

export function matchRoute(path: string): Route {
  const p = path.replace(/\/+$/, '');
  if (p === '/ui') return { view: 'overview' };
  if (p === '/ui/souls') return { view: 'souls' };
  if (p === '/ui/signin') return { view: 'signin' };
  if (p === '/ui/services') return { view: 'services' };
  if (p === '/ui/incarnations') return { view: 'incarnations' };
  if (p === '/ui/executions') return { view: 'executions' };
  const ex = /^\/ui\/executions\/([^/]+)$/.exec(p);
  if (ex) return { view: 'execution', id: decodeURIComponent(ex[1]) };
  if (p === '/ui/activity') return { view: 'activity' };
  if (p === '/ui/operators') return { view: 'archons' };
  const m = /^\/ui\/incarnations\/([^/]+)$/.exec(p);
  if (m) return { view: 'incarnation', name: decodeURIComponent(m[1]) };
  // Plans and runs sit under their incarnation, so the Incarnations tab stays the active one.
  const sub = /^\/ui\/incarnations\/([^/]+)\/(plans|runs)\/([^/]+)$/.exec(p);
  if (sub) {
    const name = decodeURIComponent(sub[1]);
    const id = decodeURIComponent(sub[3]);
    return sub[2] === 'plans'
      ? { view: 'incarnation-plan', name, planId: id }
      : { view: 'incarnation-run', name, applyId: id };
  }
  return { view: 'not-found' };
}
