import { DiscoveryService } from '@nestjs/core';
import { JobDefinition } from './job-definition';

/**
 * Marks a feature service's method as the handler of a job type, as immich's @OnJob does: the
 * worker finds it at start-up (JobHandlers) and routes every job of that name to it. The method
 * receives the payload and a JobRun; what it throws fails the attempt (BullMQ retries with the
 * job's backoff).
 */
export const OnJob = DiscoveryService.createDecorator<JobDefinition>();
