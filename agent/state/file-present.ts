// core.file.present { path, content, mode?, owner?, group? }: the file holds exactly `content`.
import { createFileState } from './file-state';
import type { StateDeps, StateModule } from './types';

export const createFilePresent = (deps: StateDeps): StateModule => createFileState('core.file.present', deps);
