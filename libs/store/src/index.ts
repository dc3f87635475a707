export * from './order.entity';
export * from './inputs';
export * from './views';
export * from './store.jobs';
export * from './orders.service';
export * from './inventory.service';
export * from './fulfilment.service';
export * from './store.module';
