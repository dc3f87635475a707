// About the size of a pet.
export const FIXED_BODY = { id: 1, name: 'Rex', categoryId: 1, status: 'available' };
