import htm from 'htm';
import { h } from 'preact';

/** Tagged templates for Preact (htm): no JSX and no build plugin. Interpolated values render as text, never as HTML. */
export const html = htm.bind(h);
