import { MessagesController } from './messages.controller';

describe('MessagesController.create', () => {
  // Nest settles every parameter a pipe may see (body, custom decorators) through promises of its own per request.
  it('takes one parameter, the response: no body or key parameter for Nest to pipe', () => {
    expect(MessagesController.prototype.create.length).toBe(1);
  });
});
