import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { UsageBucket } from '../../../packages/client/src/schema';

const SERIES = [
  { key: 'admitted', label: 'Admitted', stroke: '#2f7d32', fill: 'rgba(47,125,50,0.25)' },
  { key: 'refused', label: 'Refused (429)', stroke: '#b45309', fill: 'rgba(180,83,9,0.3)' },
  { key: 'bans', label: 'Bans', stroke: '#b91c1c', fill: 'rgba(185,28,28,0.35)' },
] as const;

const HEIGHT = 220;

/**
 * Admitted, refused and bans per bucket: a uPlot bar chart (hidden from screen readers) and the
 * same numbers as a table, which is what assistive technology and the tests read.
 */
export function UsageChart({ title, buckets, unit }: { title: string; buckets: UsageBucket[]; unit: 'hour' | 'day' }) {
  const holder = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = holder.current;
    if (!el) return;
    const xs = buckets.map((b) => Date.parse(b.start) / 1000);
    const data: uPlot.AlignedData = [xs, ...SERIES.map((s) => buckets.map((b) => b[s.key]))];
    const step = unit === 'hour' ? 3_600 : 86_400;
    // Admitted as bars centred on their bucket; refusals and bans as lines with points over them.
    const bars = uPlot.paths.bars?.({ size: [0.7, 48], align: 0 });
    const chart = new uPlot(
      {
        width: Math.max(320, el.clientWidth),
        height: HEIGHT,
        legend: { show: true },
        scales: { x: { time: true, range: (_u, min, max) => [min - step / 2, max + step / 2] } },
        axes: [{}, { label: 'requests' }],
        series: [
          { label: unit === 'hour' ? 'Hour' : 'Day' },
          ...SERIES.map((s, i) =>
            i === 0
              ? { ...s, paths: bars, points: { show: false } }
              : { ...s, fill: undefined, width: 2, points: { show: true, size: 5 } },
          ),
        ],
      },
      data,
      el,
    );
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(320, el.clientWidth), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [buckets, unit]);

  const label = (iso: string) =>
    unit === 'hour'
      ? new Date(iso).toLocaleString([], { dateStyle: 'short', timeStyle: 'short' })
      : new Date(iso).toLocaleDateString();
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      <div ref={holder} aria-hidden="true" />
      <details>
        <summary>Data table</summary>
        <table data-testid={`usage-table-${unit}`}>
          <thead>
            <tr>
              <th scope="col">{unit === 'hour' ? 'Hour' : 'Day'} starting</th>
              <th scope="col">Admitted</th>
              <th scope="col">Refused</th>
              <th scope="col">Bans</th>
            </tr>
          </thead>
          <tbody>
            {buckets.map((b) => (
              <tr key={b.start} data-start={b.start}>
                <th scope="row">{label(b.start)}</th>
                <td>{b.admitted}</td>
                <td>{b.refused}</td>
                <td>{b.bans}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
