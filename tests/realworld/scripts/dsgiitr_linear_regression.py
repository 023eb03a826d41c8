# Source: https://github.com/dsgiitr/d2l-pytorch Ch05_Linear_Neural_Networks/Concise_Implementation_of_Linear_Regression.ipynb (commit e84da49a9ea4ba448f4aaf2d18ecd9edafaa2419)
# Licence: Apache-2.0. Its LICENSE leaves the appendix's copyright line unfilled; the
#   repository is dsgiitr's. The licence's full text is in
#   tests/realworld/scripts/llms_from_scratch/LICENSE.txt (README.md, Licences).
# Changes: the cell that only displays an SVG figure (IPython.display) removed;
#   the notebook's code cells in order, as one script (trailing spaces removed).
import torch
import numpy as np
def synthetic_data(w, b, num_examples):
    """generate y = X w + b + noise"""
    X = np.random.normal(scale=1, size=(num_examples, len(w)))
    y = np.dot(X, w) + b
    y += np.random.normal(scale=0.01, size=y.shape)
    X=torch.from_numpy(X).float()
    y=torch.from_numpy( y).float().reshape(-1,1)
    return X,y
true_w = torch.Tensor([2, -3.4])
true_b = 4.2
features, labels = synthetic_data(true_w, true_b, 1000)

from torch.utils.data import TensorDataset,DataLoader
def load_array(data_arrays, batch_size, is_train=True):
    dataset=TensorDataset(*(features,labels))
    dataloader = DataLoader(dataset=dataset,batch_size=batch_size,shuffle=True)
    return dataloader
batch_size =10
data_iter = load_array((features, labels), batch_size)

for X, y in data_iter:
    print(X)
    print(y)
    break

class LinearRegressionModel(torch.nn.Module):
    def __init__(self):
        super(LinearRegressionModel, self).__init__()
        self.layer1 = torch.nn.Linear(2, 1,bias=True)
    def forward(self, x):
        y_pred = self.layer1(x)
        return y_pred

net = LinearRegressionModel()

net.layer1.weight.data=torch.Tensor(np.random.normal(size=(1,2),scale=0.01,loc=0))
net.layer1.bias.data=torch.Tensor([0])

loss = torch.nn.MSELoss(reduction = "sum")

trainer = torch.optim.SGD(net.parameters(), lr = 0.03)

num_epochs = 3
for epoch in range(num_epochs):
    for X,y in data_iter:
        l=loss(net(X) ,y)
        trainer.zero_grad()
        l.backward()
        trainer.step()
    l_epoch = loss(net(features), labels)
    print('epoch {}, loss {}'.format(epoch+1, l_epoch))

w = list(net.parameters())[0][0]
print('Error in estimating w', true_w.reshape(w.shape) - w)
b = list(net.parameters())[1][0]
print('Error in estimating b', true_b - b)
