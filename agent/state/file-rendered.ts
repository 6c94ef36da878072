// core.file.rendered { path, content, mode?, owner?, group? }: the file holds a template's output.
// The keeper renders the service's templates/<path>.tmpl before dispatch (a render error fails the
// run before anything is applied), so the soul receives finished content and writes it exactly
// like core.file.present. It stays a separate name so run reports say where the content came from.
import { createFileState } from './file-state';
import type { StateDeps, StateModule } from './types';

export const createFileRendered = (deps: StateDeps): StateModule => createFileState('core.file.rendered', deps);
