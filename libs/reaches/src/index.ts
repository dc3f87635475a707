export * from './learning-cluster';
