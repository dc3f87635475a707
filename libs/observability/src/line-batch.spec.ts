import { lineBatch, LineSink } from './line-batch';

/** A sink that records what it is handed and when it is flushed. */
function recording() {
  const events: string[] = [];
  const sink: LineSink = {
    write: (text: string) => void events.push(`write ${text}`),
    flush: (cb) => {
      events.push('flush');
      cb();
    },
  };
  return { sink, events };
}

describe('lineBatch', () => {
  it('hands the sink its lines joined, once they reach the batch size', () => {
    const { sink, events } = recording();
    const batch = lineBatch(sink, 10);
    batch.write('abc\n');
    batch.write('def\n');
    expect(events).toEqual([]);
    batch.write('ghi\n');
    batch.write('j\n');
    expect(events).toEqual(['write abc\ndef\nghi\n']);
  });

  it('hands over what it holds before the sink flushes', () => {
    const { sink, events } = recording();
    const batch = lineBatch(sink, 10);
    batch.write('abc\n');
    const flushed = jest.fn();
    batch.flush(flushed);
    batch.flush(flushed);
    expect(events).toEqual(['write abc\n', 'flush', 'flush']);
    expect(flushed).toHaveBeenCalledTimes(2);
  });
});
