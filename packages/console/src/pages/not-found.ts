import { Link, Page } from '../components/ui';
import { html } from '../html';

/** An unknown console path. */
export function NotFoundPage() {
  return html`<${Page} name="not-found" title="Not found">
    <p>There is no such page. <${Link} to="/">Back to the overview<//></p>
  <//>`;
}
