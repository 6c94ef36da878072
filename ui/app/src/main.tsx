// The web UI's shell: sign-in gate, navigation and the view for the current path.
import { render } from 'preact';
import { useEffect } from 'preact/hooks';
import { Link } from './components';
import { matchRoute, navigate, type Route, usePath } from './router';
import { currentToken, joinTabs, signInPath, signOut } from './session';
import { ExecutionPage } from './views/execution';
import { ExecutionForm } from './views/execution-form';
import { Activity } from './views/activity';
import { Archons } from './views/archons';
import { Incarnation } from './views/incarnation';
import { Incarnations } from './views/incarnations';
import { Overview } from './views/overview';
import { PlanView } from './views/plan';
import { RunPage } from './views/run';
import { Services } from './views/services';
import { SignIn } from './views/signin';
import { Souls } from './views/souls';
import './style.css';

function Nav({ active }: { active: string }) {
  const item = (href: string, label: string, view: string) => (
    <Link href={href} class={active.startsWith(view) ? 'active' : undefined}>
      {label}
    </Link>
  );
  return (
    <header class="top">
      <strong class="brand">Keeper</strong>
      <nav>
        {item('/ui/', 'Overview', 'overview')}
        {item('/ui/souls', 'Souls', 'souls')}
        {item('/ui/services', 'Services', 'services')}
        {item('/ui/incarnations', 'Incarnations', 'incarnation')}
        {item('/ui/executions', 'Run a module', 'execution')}
        {item('/ui/activity', 'Activity', 'activity')}
        {item('/ui/operators', 'Operators', 'archons')}
      </nav>
      <button type="button" class="link" onClick={() => signOut()}>
        Sign out
      </button>
    </header>
  );
}

/** The tab's title names the page (history, bookmarks and tab strips tell pages apart). */
function titleOf(route: Route): string {
  switch (route.view) {
    case 'signin':
      return 'Sign in';
    case 'overview':
      return 'Overview';
    case 'souls':
      return 'Souls';
    case 'services':
      return 'Services';
    case 'incarnations':
      return 'Incarnations';
    case 'activity':
      return 'Activity';
    case 'archons':
      return 'Operators';
    case 'incarnation':
      return `Incarnation ${route.name}`;
    case 'incarnation-plan':
      return `Plan ${route.planId} of ${route.name}`;
    case 'incarnation-run':
      return `Run ${route.applyId} of ${route.name}`;
    case 'executions':
      return 'Run a module';
    case 'execution':
      return `Execution ${route.id}`;
    default:
      return 'Not found';
  }
}

function App() {
  const path = usePath();
  const route = matchRoute(path);
  const signedIn = currentToken() !== null;
  useEffect(() => {
    if (!signedIn && route.view !== 'signin')
      navigate(signInPath(location.pathname + location.search), { replace: true });
  }, [signedIn, route.view]);
  useEffect(() => {
    document.title = `${titleOf(signedIn ? route : { view: 'signin' })} · Keeper`;
  }, [path, signedIn]);
  if (route.view === 'signin' || !signedIn) return <SignIn />;
  let view;
  switch (route.view) {
    case 'overview':
      view = <Overview />;
      break;
    case 'souls':
      view = <Souls />;
      break;
    case 'services':
      view = <Services />;
      break;
    case 'incarnations':
      view = <Incarnations />;
      break;
    case 'activity':
      view = <Activity />;
      break;
    case 'archons':
      view = <Archons />;
      break;
    case 'incarnation':
      view = <Incarnation key={route.name} name={route.name} />;
      break;
    case 'incarnation-plan':
      view = <PlanView key={route.planId} incarnation={route.name} planId={route.planId} />;
      break;
    case 'incarnation-run':
      view = <RunPage key={route.applyId} incarnation={route.name} applyId={route.applyId} />;
      break;
    case 'executions':
      view = <ExecutionForm />;
      break;
    case 'execution':
      view = <ExecutionPage key={route.id} id={route.id} />;
      break;
    default:
      view = (
        <p>
          Nothing here. <Link href="/ui/souls">Go to souls</Link>.
        </p>
      );
  }
  return (
    <>
      <Nav active={route.view} />
      <main>{view}</main>
    </>
  );
}

// A tab opened from a link first asks the browser's open tabs for their session (at most 300 ms).
void joinTabs().then(() => render(<App />, document.getElementById('app')!));
