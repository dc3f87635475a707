import { likeSubstring } from './catalog.queries';
import { stockForStatus } from './pets.service';

describe('pets service rules', () => {
  it('matches a name filter as a literal, case-insensitive substring', () => {
    expect(likeSubstring('Rex')).toBe('%rex%');
    expect(likeSubstring('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });

  it('derives the stock a chosen status implies', () => {
    expect(stockForStatus('sold', 7)).toBe(0);
    expect(stockForStatus('available', 0)).toBe(1);
    expect(stockForStatus('available', 4)).toBe(4);
    expect(stockForStatus(undefined, 3)).toBe(3);
  });
});
