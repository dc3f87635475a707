import { Injectable } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import { JobHandler } from './job-run';
import { OnJob } from './on-job.decorator';

/**
 * Every @OnJob handler of the application, by job name. Found on first use: BullMQ workers start
 * while Nest is still initialising modules, and by their first job every provider exists.
 */
@Injectable()
export class JobHandlers {
  private byName?: Map<string, JobHandler>;

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
  ) {}

  /** The handler of job `name`; undefined for a job no handler claims (a newer release's). */
  handler(name: string): JobHandler | undefined {
    this.byName ??= this.discover();
    return this.byName.get(name);
  }

  private discover(): Map<string, JobHandler> {
    const byName = new Map<string, JobHandler>();
    for (const wrapper of this.discovery.getProviders()) {
      const instance: unknown = wrapper.instance;
      if (!instance || typeof instance !== 'object' || !wrapper.isDependencyTreeStatic()) continue;
      const prototype = Object.getPrototypeOf(instance) as object;
      for (const method of this.scanner.getAllMethodNames(prototype)) {
        const definition = this.discovery.getMetadataByDecorator(OnJob, wrapper, method);
        if (!definition) continue;
        if (byName.has(definition.name)) throw new Error(`two @OnJob handlers for job ${definition.name}`);
        const fn = (instance as Record<string, JobHandler>)[method];
        byName.set(definition.name, fn.bind(instance));
      }
    }
    return byName;
  }
}
