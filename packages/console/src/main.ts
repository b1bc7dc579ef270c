import { render } from 'preact';
import { App } from './app';
import { html } from './html';
import 'uplot/dist/uPlot.min.css';

const root = document.getElementById('app');
if (root) render(html`<${App} />`, root);
