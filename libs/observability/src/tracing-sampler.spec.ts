import * as sdk from '@opentelemetry/sdk-trace';
import { loadConfig, TRACES_SAMPLERS } from '@app/config';
import { samplerFor } from './tracing';

const samplerOf = (env: Record<string, string>) => samplerFor(loadConfig(env).tracing.sampling, sdk).toString();

/** OTEL_TRACES_SAMPLER's values, built as the OpenTelemetry specification defines them. */
describe('samplerFor', () => {
  it.each([
    ['always_on', 'AlwaysOnSampler'],
    ['always_off', 'AlwaysOffSampler'],
    ['traceidratio', 'TraceIdRatioBased{0.1}'],
    ['parentbased_always_on', 'ParentBased{root=AlwaysOnSampler'],
    ['parentbased_always_off', 'ParentBased{root=AlwaysOffSampler'],
    ['parentbased_traceidratio', 'ParentBased{root=TraceIdRatioBased{0.1}'],
  ])('%s: %s', (sampler, built) => {
    expect(samplerOf({ OTEL_TRACES_SAMPLER: sampler, OTEL_TRACES_SAMPLER_ARG: '0.1' }).startsWith(built)).toBe(true);
  });

  it('covers every value config accepts', () => {
    expect(TRACES_SAMPLERS).toHaveLength(6);
  });

  it('unset: parentbased_always_on; with only OTEL_TRACES_SAMPLER_ARG, parentbased_traceidratio at that ratio', () => {
    expect(samplerOf({})).toMatch(/^ParentBased\{root=AlwaysOnSampler/);
    expect(samplerOf({ OTEL_TRACES_SAMPLER_ARG: '0.5' })).toMatch(/^ParentBased\{root=TraceIdRatioBased\{0.5\}/);
  });
});
