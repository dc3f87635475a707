import { ConfigError, loadConfig } from './config';

describe('QUEUE_DASHBOARD_TOKEN', () => {
  it('leaves the dashboard off when unset or empty', () => {
    expect(loadConfig({}).queueDashboardToken).toBeUndefined();
    expect(loadConfig({ QUEUE_DASHBOARD_TOKEN: '' }).queueDashboardToken).toBeUndefined();
  });

  it('refuses a token shorter than 24 characters, naming the variable but not the value', () => {
    const short = 'guessable-token';
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).toThrow(ConfigError);
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).toThrow(/QUEUE_DASHBOARD_TOKEN/);
    expect(() => loadConfig({ QUEUE_DASHBOARD_TOKEN: short })).not.toThrow(new RegExp(short));
  });
});
