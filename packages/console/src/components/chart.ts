import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { formatCount, formatUsd, formatUsdAxis } from '../format';
import { html } from '../html';
import { chartData, type Metric } from '../usage-data';

const PALETTE = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#17becf', '#8c564b', '#e377c2'];

/** One line per series over days, and the budgets as dashed horizontal lines. */
export interface ChartProps {
  title: string;
  days: string[];
  series: Array<{ label: string; values: number[] }>;
  budgets: Array<{ label: string; value: number }>;
  metric: Metric;
  testid: string;
}

/** A uPlot line chart (drawn on a canvas; its legend is text). Sized to its container. */
export function UsageChart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  // Drawn again only when what it shows changes (the arrays are new on every render of the page).
  const key = JSON.stringify([props.title, props.days, props.series, props.budgets, props.metric]);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const fmt = (v: number) => (props.metric === 'usd' ? formatUsd(v) : formatCount(v, true));
    const lines = [
      ...props.series.map((s, i) => ({
        label: s.label,
        stroke: PALETTE[i % PALETTE.length],
        width: 2,
        value: (_u: uPlot, v: number | null) => (v == null ? '—' : fmt(v)),
      })),
      ...props.budgets.map((b) => ({
        label: `${b.label} (budget)`,
        stroke: '#b3261e',
        dash: [6, 4],
        width: 1.5,
        points: { show: false },
        value: () => fmt(b.value),
      })),
    ];
    const data = [...chartData(props.days, props.series), ...props.budgets.map((b) => props.days.map(() => b.value))];
    const width = Math.max(280, el.clientWidth - 16);
    const plot = new uPlot(
      {
        title: props.title,
        width,
        height: 260,
        series: [{ label: 'Day', value: (_u: uPlot, v: number | null) => (v == null ? '—' : new Date(v * 1000).toISOString().slice(0, 10)) }, ...lines],
        axes: [
          { stroke: 'currentColor' },
          {
            stroke: 'currentColor',
            size: 70,
            values: (_u: uPlot, ticks: number[]) => ticks.map((t) => (props.metric === 'usd' ? formatUsdAxis(t) : formatCount(t, true))),
          },
        ],
        scales: { x: { time: true } },
      },
      data as uPlot.AlignedData,
      el,
    );
    const resize = () => plot.setSize({ width: Math.max(280, el.clientWidth - 16), height: 260 });
    window.addEventListener('resize', resize);
    return () => {
      window.removeEventListener('resize', resize);
      plot.destroy();
    };
  }, [key]);
  return html`<div class="chart" ref=${box} data-testid=${props.testid} data-series=${props.series.length} data-budgets=${props.budgets.length} role="img" aria-label=${props.title}></div>`;
}
