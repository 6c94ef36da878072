// A run report on its own page (/ui/incarnations/<name>/runs/<apply_id>): where applying a plan
// leads, and what a plan's "applied by" links to. The report itself is the incarnation page's.
import { enc } from '../api';
import { Link } from '../components';
import { RunReportView } from './run-report';

export function RunPage({ incarnation, applyId }: { incarnation: string; applyId: string }) {
  return (
    <section>
      <p>
        <Link href={`/ui/incarnations/${enc(incarnation)}`}>← {incarnation}</Link>
      </p>
      <RunReportView incarnation={incarnation} applyId={applyId} />
    </section>
  );
}
