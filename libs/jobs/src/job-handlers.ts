import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { JobDefinition } from './job-definition';
import { JobHandler } from './job-run';
import { OnJob } from './on-job.decorator';

/** Found once every provider exists: the worker asks at bootstrap, before its queue workers start. */
@Injectable()
export class JobHandlers {
  private found?: Map<string, { job: JobDefinition; handle: JobHandler }>;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** Undefined for a job no handler claims (a newer release's). */
  handler(name: string): JobHandler | undefined {
    return this.discover().get(name)?.handle;
  }

  jobs(): JobDefinition[] {
    return [...this.discover().values()].map(({ job }) => job);
  }

  private discover(): Map<string, { job: JobDefinition; handle: JobHandler }> {
    if (this.found) return this.found;
    const found = new Map<string, { job: JobDefinition; handle: JobHandler }>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const job = this.discovery.getMetadataByDecorator(OnJob, wrapper, method);
        if (!job) continue;
        if (found.has(job.name)) throw new Error(`two @OnJob handlers for job ${job.name}`);
        const fn = (instance as Record<string, JobHandler>)[method];
        found.set(job.name, { job, handle: fn.bind(instance) });
      }
    }
    return (this.found = found);
  }
}
