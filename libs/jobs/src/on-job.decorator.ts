import { DiscoveryService } from '@nestjs/core';
import { JobDefinition } from './job-definition';

/** The handler of a job type, found by the worker at start-up (JobHandlers); what it throws fails the attempt. */
export const OnJob = DiscoveryService.createDecorator<JobDefinition>();
